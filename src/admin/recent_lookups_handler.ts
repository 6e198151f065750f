// /stats/recentlookups and its clear, enable and disable (Envoy 1.16's): the stat names this
// server's processes looked up by string lately, summed over the processes, least looked up
// first, and the total of lookups since the last clear. Tracking names is off until enabled;
// the total always counts.

import { type ProcessLookups, RECENT_LOOKUPS_CAPACITY } from '../stats/recent_lookups';
import type { AdminHandler } from './admin_server';

export interface RecentLookupsControl {
  /** Names remembered per process; 0 when disabled. */
  readonly capacity: number;
  setCapacity(capacity: number): void;
  clear(): void;
  collect(): Promise<readonly ProcessLookups[]>;
}

const NOT_ENABLED = 'Lookup tracking is not enabled. Use /stats/recentlookups/enable to enable.\n';

/** Envoy's table: `{:8d} {}` per name, ordered by count then name. Pure. */
export function renderRecentLookups(processes: readonly ProcessLookups[], enabled: boolean): string {
  const counts = new Map<string, number>();
  let total = 0;
  for (const { names, total: processTotal } of processes) {
    total += processTotal;
    for (const [name, count] of names) counts.set(name, (counts.get(name) ?? 0) + count);
  }
  const rows = [...counts].sort(([a, x], [b, y]) => x - y || (a < b ? -1 : a > b ? 1 : 0));
  const table = rows.map(([name, count]) => `${String(count).padStart(8)} ${name}\n`).join('');
  const head = table === '' && !enabled ? NOT_ENABLED : `   Count Lookup\n${table}`;
  return `${head}\ntotal: ${total}\n`;
}

export function recentLookupsHandlers(control: RecentLookupsControl): AdminHandler[] {
  const command = (path: string, help: string, run: () => void): AdminHandler => ({
    path,
    help,
    mutatesState: true,
    decodeQuery: false,
    handle: () => {
      run();
      return { status: 200, body: 'OK\n' };
    },
  });
  return [
    {
      path: '/stats/recentlookups',
      help: 'Show recent stat-name lookups',
      mutatesState: false,
      decodeQuery: false,
      handle: async () => ({ status: 200, body: renderRecentLookups(await control.collect(), control.capacity > 0) }),
    },
    command('/stats/recentlookups/clear', 'clear list of stat-name lookups and counter', () => control.clear()),
    command('/stats/recentlookups/disable', 'disable recording of reset stat-name lookup names', () => control.setCapacity(0)),
    command('/stats/recentlookups/enable', 'enable recording of reset stat-name lookup names', () => control.setCapacity(RECENT_LOOKUPS_CAPACITY)),
  ];
}
