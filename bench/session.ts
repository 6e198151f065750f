// What a load benchmark run holds from start to end: the processes it starts (all stopped at the
// end, Ctrl-C included), a scratch directory, the CPU plan, and the nginx upstream every row
// ends at. `make bench` and `make bench-compare` run in one.

import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planPinning, readAllowedCpus, type Pinning } from './cpu_pinning';
import { freePort } from './free_port';
import { waitUntilServing } from './http_probe';
import { onInterrupt } from './interrupt';
import { startUpstream } from './nginx';
import { SMALL_BODY, SMALL_PATH } from './plan';
import { clockTicksPerSecond } from './proc_cpu';
import { ProcessGroups } from './process_group';
import { START_TIMEOUT_MS } from './services';

export interface Session {
  readonly processes: ProcessGroups;
  /** Aborted by the first Ctrl-C: rows cut short by it are not results. */
  readonly interrupted: AbortSignal;
  /** Scratch directory of this run, removed at its end. */
  readonly runDir: string;
  readonly pinning: Pinning | null;
  readonly ticksPerSecond: number;
}

/** Runs `body` in a session, then stops every process it started and removes its directory. */
export async function withSession<T>(body: (session: Session) => Promise<T>): Promise<T> {
  const processes = new ProcessGroups();
  const interrupted = onInterrupt(processes);
  const runDir = mkdtempSync(join(tmpdir(), 'proxy-bench-'));
  // nginx workers drop root privileges and must still read the upstream's 16 KiB file.
  chmodSync(runDir, 0o755);
  try {
    return await body({ processes, interrupted, runDir, pinning: planPinning(readAllowedCpus()), ticksPerSecond: clockTicksPerSecond() });
  } finally {
    await processes.stopAll();
    rmSync(runDir, { recursive: true, force: true });
  }
}

/** Starts the upstream on the load CPU and resolves with its port once it serves. */
export async function startBenchUpstream(session: Session): Promise<number> {
  const port = await freePort();
  const upstream = startUpstream(session.processes, join(session.runDir, 'upstream'), port, session.pinning?.loadCpu ?? null);
  await waitUntilServing(upstream, { port, path: SMALL_PATH, expectedBody: SMALL_BODY }, START_TIMEOUT_MS);
  return port;
}
