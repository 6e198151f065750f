// POST /reset_counters: every counter reads 0 in /stats from here on. Gauges and histograms are
// untouched; the counters' cells keep counting (see StatsReader.resetCounters), so an increment
// racing the reset is never lost.

import { AdminHandler } from './admin_server';

export function resetCountersHandler(reset: () => void): AdminHandler {
  return {
    path: '/reset_counters',
    help: 'reset all counters to zero',
    mutatesState: true,
    decodeQuery: false,
    handle: () => {
      reset();
      return { status: 200, body: 'OK\n' };
    },
  };
}
