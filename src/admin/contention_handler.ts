// GET /contention: the mutex contention statistics of --enable-mutex-tracing, or Envoy's
// explanation that tracing is off.

import { AdminHandler, JSON_TYPE } from './admin_server';
import type { MutexTracer } from '../shared_memory/mutex_tracer';

export const TRACING_DISABLED =
  'Mutex contention tracing is not enabled. To enable, run Proxy with flag --enable-mutex-tracing.';

/** @param tracer null when --enable-mutex-tracing is off */
export function contentionHandler(tracer: MutexTracer | null): AdminHandler {
  return {
    path: '/contention',
    help: 'dump current Proxy mutex contention stats (if enabled)',
    mutatesState: false,
    decodeQuery: false,
    handle: () => {
      if (tracer === null) return { status: 200, body: TRACING_DISABLED };
      const s = tracer.stats();
      // envoy.admin.v3.MutexStats, pretty, always printed; its uint64 fields are JSON strings.
      const body = {
        num_contentions: String(s.numContentions),
        current_wait_cycles: String(s.currentWaitCycles),
        lifetime_wait_cycles: String(s.lifetimeWaitCycles),
      };
      return { status: 200, contentType: JSON_TYPE, body: `${JSON.stringify(body, null, 1)}\n` };
    },
  };
}
