// One row: an unmeasured warm-up, then measured rounds of load, each bracketed by CPU samples
// of the proxy's whole process tree so that CPU per request covers exactly the requests the
// load generator counted.

import { runH2load } from './h2load';
import type { LoadResult } from './load_result';
import type { Row } from './plan';
import { readTreeCpuTicks } from './proc_cpu';
import type { ProcessGroups } from './process_group';
import type { RunningService } from './services';
import type { BenchSettings } from './settings';
import type { Round } from './summary';
import { runWrk } from './wrk';

/** h2load's streams per connection: enough to multiplex, few enough to keep latency sane. */
const H2_STREAMS = 10;

export async function measureRow(
  processes: ProcessGroups,
  settings: BenchSettings,
  loadCpu: number | null,
  service: RunningService,
  row: Row,
): Promise<Round[]> {
  const group = row.group;
  const url = `${group.layer === 'tls' ? 'https' : 'http'}://127.0.0.1:${service.port}${group.path}`;
  const run = (durationSeconds: number): Promise<LoadResult> =>
    group.load === 'h2load'
      ? runH2load(processes, { url, connections: settings.connections, streams: H2_STREAMS, durationSeconds, cpu: loadCpu })
      : runWrk(processes, {
          url,
          connections: settings.connections,
          threads: settings.threads,
          durationSeconds,
          cpu: loadCpu,
          closeEachRequest: group.closeEachRequest,
        });
  // Fills connection pools, caches and the JIT so that round one is not the odd one out.
  await run(settings.warmupSeconds);
  const rounds: Round[] = [];
  for (let round = 0; round < settings.rounds; round++) {
    const pid = service.process?.pid;
    const before = pid === undefined ? null : readTreeCpuTicks(pid);
    const load = await run(settings.durationSeconds);
    const after = pid === undefined ? null : readTreeCpuTicks(pid);
    rounds.push({ load, cpuTicks: before === null || after === null ? null : after - before });
  }
  return rounds;
}
