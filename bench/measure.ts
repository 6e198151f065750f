// One row: an unmeasured warm-up, then measured rounds of load, each bracketed by CPU samples
// of the proxy's whole process tree so that CPU per request covers exactly the requests the
// load generator counted.

import { requestBodyFile, runH2load } from './h2load';
import type { LoadResult } from './load_result';
import type { Row } from './plan';
import { readTreeCpuTicks } from './proc_cpu';
import type { ProcessGroups } from './process_group';
import type { RunningService } from './services';
import type { LoadSettings } from './settings';
import type { Round } from './summary';
import { runWrk } from './wrk';

/** What generates the load: its settings, and the CPU it is pinned to (null when nothing is pinned). */
export interface LoadGenerator {
  readonly processes: ProcessGroups;
  readonly settings: LoadSettings;
  readonly cpu: number | null;
  /** Where request bodies are written for the load generator to send. */
  readonly runDir: string;
}

export type Measurement = { readonly row: Row } & (
  | { readonly kind: 'measured'; readonly rounds: readonly Round[] }
  | { readonly kind: 'failed'; readonly error: string }
);

/** h2load's streams per connection: enough to multiplex, few enough to keep latency sane. */
export const H2_STREAMS = 10;

export async function measureRow(load: LoadGenerator, rounds: number, service: RunningService, row: Row): Promise<Round[]> {
  const { processes, settings, cpu } = load;
  const group = row.group;
  const url = `${group.layer === 'tls' ? 'https' : 'http'}://127.0.0.1:${service.port}${group.path}`;
  const bodyPath = group.requestBodyBytes === undefined ? undefined : requestBodyFile(load.runDir, group.requestBodyBytes);
  const run = (durationSeconds: number): Promise<LoadResult> =>
    group.load === 'h2load'
      ? runH2load(processes, { url, connections: settings.connections, streams: H2_STREAMS, durationSeconds, cpu, bodyPath })
      : runWrk(processes, {
          url,
          connections: settings.connections,
          threads: settings.threads,
          durationSeconds,
          cpu,
          closeEachRequest: group.closeEachRequest,
          pacedMs: group.pacedMs,
        });
  // Fills connection pools, caches and the JIT so that round one is not the odd one out.
  await run(settings.warmupSeconds);
  const measured: Round[] = [];
  for (let round = 0; round < rounds; round++) {
    const pid = service.process?.pid;
    const before = pid === undefined ? null : readTreeCpuTicks(pid);
    const result = await run(settings.durationSeconds);
    const after = pid === undefined ? null : readTreeCpuTicks(pid);
    measured.push({ load: result, cpuTicks: before === null || after === null ? null : after - before });
  }
  return measured;
}

/**
 * Starts the service that serves `rows`, measures each row, stops the service. A service that
 * fails to start fails its rows, and a failed row does not stop the others.
 */
export async function measureService(
  load: LoadGenerator,
  rounds: number,
  start: () => Promise<RunningService>,
  rows: readonly Row[],
): Promise<Measurement[]> {
  let running;
  try {
    running = await start();
  } catch (error) {
    return rows.map((row) => ({ row, kind: 'failed', error: (error as Error).message }));
  }
  const measurements: Measurement[] = [];
  try {
    for (const row of rows) {
      try {
        measurements.push({ row, kind: 'measured', rounds: await measureRow(load, rounds, running, row) });
      } catch (error) {
        measurements.push({ row, kind: 'failed', error: (error as Error).message });
      }
    }
  } finally {
    if (running.process) await load.processes.stop(running.process);
  }
  return measurements;
}
