// POST /cpuprofiler?enable=y|n: a CPU profile of the supervisor and every worker, one file
// each (see ServerCpuProfiler). Disabling answers with where the files are.

import type { ServerCpuProfiler } from '../server/server_cpu_profiler';
import { AdminHandler, AdminResponse } from './admin_server';

export const CPUPROFILER_USAGE = '?enable=<y|n>\n';

export function cpuProfilerHandler(profiler: ServerCpuProfiler): AdminHandler {
  return {
    path: '/cpuprofiler',
    help: 'enable/disable the CPU profiler',
    mutatesState: true,
    decodeQuery: false,
    handle: async (req): Promise<AdminResponse> => {
      const enable = req.query.get('enable');
      if (req.query.size !== 1 || (enable !== 'y' && enable !== 'n')) return { status: 400, body: CPUPROFILER_USAGE };
      if (enable === 'y') {
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
    },
  };
}
