// The proxy under test gets one CPU to itself; wrk and the upstream share another, so that the
// load generator neither steals the proxy's CPU nor hides the proxy's cost.

import { readFileSync } from 'node:fs';

export interface Pinning {
  readonly proxyCpu: number;
  readonly loadCpu: number;
}

/** A command line, possibly wrapped in taskset. */
export interface Command {
  readonly command: string;
  readonly args: readonly string[];
}

export class CpuListError extends Error {
  override readonly name = 'CpuListError';
}

/** The kernel's CPU list notation, as in Cpus_allowed_list: `0-3,6,8-9`. */
export function parseCpuList(text: string): number[] {
  const cpus: number[] = [];
  for (const part of text.trim().split(',')) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!match) throw new CpuListError(`malformed CPU list '${text}'`);
    const first = Number(match[1]);
    const last = match[2] === undefined ? first : Number(match[2]);
    for (let cpu = first; cpu <= last; cpu++) cpus.push(cpu);
  }
  return cpus;
}

/** Null when there is a single CPU: then everything shares it and nothing is pinned. */
export function planPinning(allowedCpus: readonly number[]): Pinning | null {
  const [proxyCpu, loadCpu] = allowedCpus;
  return proxyCpu === undefined || loadCpu === undefined ? null : { proxyCpu, loadCpu };
}

export function pinnedTo(cpu: number | null, command: string, args: readonly string[]): Command {
  return cpu === null ? { command, args } : { command: 'taskset', args: ['-c', String(cpu), command, ...args] };
}

/** The CPUs this process may run on (its affinity, not merely the number of CPUs online). */
export function readAllowedCpus(): number[] {
  const status = readFileSync('/proc/self/status', 'utf8');
  const match = /^Cpus_allowed_list:\s*(\S+)$/m.exec(status);
  if (!match?.[1]) throw new CpuListError('no Cpus_allowed_list in /proc/self/status');
  return parseCpuList(match[1]);
}

/** One line for the report: where everything runs, or why nothing is pinned. */
export function describePinning(pinning: Pinning | null): string {
  return pinning
    ? `CPU ${pinning.proxyCpu}: the proxy under test; CPU ${pinning.loadCpu}: wrk and the upstream`
    : 'note: only one CPU is available, so the proxy, wrk and the upstream share it and nothing is pinned; ' +
        'the numbers are not comparable with a two-CPU run';
}
