// One row: an unmeasured warm-up, then measured wrk rounds, each bracketed by CPU samples of the
// proxy's whole process tree so that CPU per request covers exactly the requests wrk counted.

import type { Row } from './plan';
import { readTreeCpuTicks } from './proc_cpu';
import type { ProcessGroups } from './process_group';
import type { RunningService } from './services';
import type { BenchSettings } from './settings';
import type { Round } from './summary';
import { runWrk, type WrkRun } from './wrk';

export async function measureRow(
  processes: ProcessGroups,
  settings: BenchSettings,
  loadCpu: number | null,
  service: RunningService,
  row: Row,
): Promise<Round[]> {
  const run = (durationSeconds: number): WrkRun => ({
    url: `http://127.0.0.1:${service.port}${row.group.path}`,
    connections: settings.connections,
    threads: settings.threads,
    durationSeconds,
    cpu: loadCpu,
  });
  // Fills connection pools, caches and the JIT so that round one is not the odd one out.
  await runWrk(processes, run(settings.warmupSeconds));
  const rounds: Round[] = [];
  for (let round = 0; round < settings.rounds; round++) {
    const pid = service.process?.pid;
    const before = pid === undefined ? null : readTreeCpuTicks(pid);
    const wrk = await runWrk(processes, run(settings.durationSeconds));
    const after = pid === undefined ? null : readTreeCpuTicks(pid);
    rounds.push({ wrk, cpuTicks: before === null || after === null ? null : after - before });
  }
  return rounds;
}
