// POST /cpuprofiler and /heapprofiler ?enable=y|n (Envoy's ProfilingHandler): a CPU or heap
// profile of the supervisor and every worker, one file each (see ServerProfiler). Disabling
// answers with where the files are. Each keeps Envoy's texts and statuses, which differ.

import type { ServerProfiler } from '../server/server_profiler';
import { AdminHandler, AdminRequest, AdminResponse } from './admin_server';

export const PROFILER_USAGE = '?enable=<y|n>\n';

/** The one parameter both take, or Envoy's 400. */
function enableParam(req: AdminRequest): boolean | AdminResponse {
  const enable = req.query.get('enable');
  if (req.query.size !== 1 || (enable !== 'y' && enable !== 'n')) return { status: 400, body: PROFILER_USAGE };
  return enable === 'y';
}

function profilerHandler(path: string, help: string, toggle: (enable: boolean) => Promise<AdminResponse>): AdminHandler {
  return {
    path,
    help,
    mutatesState: true,
    decodeQuery: false,
    handle: (req) => {
      const enable = enableParam(req);
      return typeof enable === 'boolean' ? toggle(enable) : enable;
    },
  };
}

export function cpuProfilerHandler(profiler: ServerProfiler): AdminHandler {
  return profilerHandler('/cpuprofiler', 'enable/disable the CPU profiler', async (enable) => {
    if (enable) {
      const started = await profiler.start();
      if (started.kind === 'already_enabled') return { status: 400, body: 'the CPU profiler is already enabled\n' };
      if (started.kind === 'failed') return { status: 500, body: `failure to start the profiler: ${started.reasons.join('; ')}\n` };
      return { status: 200, body: 'OK\n' };
    }
    const stopped = await profiler.stop();
    // As Envoy: disabling a profiler that is not running is no error.
    if (stopped.kind === 'not_enabled') return { status: 200, body: 'OK\n' };
    const files = stopped.files.map((file) => `${file}\n`).join('');
    if (stopped.failures.length > 0) {
      return { status: 500, body: `${files}failure to write the profile: ${stopped.failures.join('; ')}\n` };
    }
    return { status: 200, body: `${files}OK\n` };
  });
}

/** Envoy's answers have no final newline here. */
export function heapProfilerHandler(profiler: ServerProfiler): AdminHandler {
  return profilerHandler('/heapprofiler', 'enable/disable the heap profiler', async (enable) => {
    if (enable) {
      const started = await profiler.start();
      if (started.kind === 'already_enabled') return { status: 400, body: 'Fail to start heap profiler: already started' };
      if (started.kind === 'failed') return { status: 500, body: `Fail to start the heap profiler: ${started.reasons.join('; ')}` };
      return { status: 200, body: 'Starting heap profiler' };
    }
    const stopped = await profiler.stop();
    if (stopped.kind === 'not_enabled') return { status: 400, body: 'Fail to stop heap profiler: not started' };
    const written = `Heap profiler stopped and data written to ${stopped.files.join(', ')}.`;
    if (stopped.failures.length > 0) return { status: 500, body: `${written} Failure to write: ${stopped.failures.join('; ')}` };
    return { status: 200, body: written };
  });
}
