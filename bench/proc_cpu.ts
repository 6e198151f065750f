// CPU time of a proxy, read from /proc: the sum over the process and all its descendants, so a
// supervisor with worker processes (ours) or a master with workers (nginx) is counted whole.

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcStat {
  readonly pid: number;
  readonly ppid: number;
  /**
   * utime + stime (fields 14, 15) plus cutime + cstime (16, 17), in clock ticks. The children
   * fields hold the time of descendants that exited and were reaped, such as a worker that
   * was replaced mid-run, which the live tree no longer shows.
   */
  readonly cpuTicks: number;
}

export class ProcStatError extends Error {
  override readonly name = 'ProcStatError';
}

/** One /proc/<pid>/stat line (proc(5)). */
export function parseProcStat(line: string): ProcStat {
  // comm (field 2) is in parentheses and may itself hold spaces and parentheses.
  const open = line.indexOf('(');
  const close = line.lastIndexOf(')');
  if (open < 0 || close < open) throw new ProcStatError(`malformed /proc stat line: ${line}`);
  // After comm come the fields from 3 (state) on: index i here is field i + 3.
  const rest = line.slice(close + 2).trim().split(/\s+/);
  const field = (number: number): number => {
    const value = Number(rest[number - 3]);
    if (!Number.isSafeInteger(value)) throw new ProcStatError(`field ${number} is not a number in: ${line}`);
    return value;
  };
  return {
    pid: Number.parseInt(line.slice(0, open), 10),
    ppid: field(4),
    cpuTicks: field(14) + field(15) + field(16) + field(17),
  };
}

/** The root and every process below it, in `processes` (which must contain the root). */
export function processTree(rootPid: number, processes: readonly ProcStat[]): ProcStat[] {
  const childrenOf = new Map<number, ProcStat[]>();
  for (const stat of processes) {
    const siblings = childrenOf.get(stat.ppid) ?? [];
    siblings.push(stat);
    childrenOf.set(stat.ppid, siblings);
  }
  const root = processes.find((stat) => stat.pid === rootPid);
  if (!root) throw new ProcStatError(`process ${rootPid} is not running`);
  const tree = [root];
  // Appending while iterating visits the tree breadth-first.
  for (const stat of tree) tree.push(...(childrenOf.get(stat.pid) ?? []));
  return tree;
}

// /proc/<pid>/task/<tid>/children would spare the scan, but kernels without
// CONFIG_PROC_CHILDREN (this machine's among them) lack it; the parent links are always there.
function readAllProcesses(): ProcStat[] {
  const processes: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      processes.push(parseProcStat(readFileSync(`/proc/${entry}/stat`, 'utf8')));
    } catch (error) {
      // A process may exit between the listing and the read.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'ESRCH') {
        throw error;
      }
    }
  }
  return processes;
}

/** The running process and all its descendants. */
export function readProcessTree(rootPid: number): ProcStat[] {
  return processTree(rootPid, readAllProcesses());
}

/** CPU clock ticks used so far by the process and all its descendants. */
export function readTreeCpuTicks(rootPid: number): number {
  return readProcessTree(rootPid).reduce((sum, stat) => sum + stat.cpuTicks, 0);
}

/** The unit of /proc/<pid>/stat times (`getconf CLK_TCK`, almost always 100). */
export function clockTicksPerSecond(): number {
  const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  if (!Number.isSafeInteger(ticks) || ticks <= 0) throw new ProcStatError(`getconf CLK_TCK gave '${ticks}'`);
  return ticks;
}
