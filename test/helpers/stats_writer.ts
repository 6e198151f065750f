// A second process for the stats tests: maps a region by name, claims a column and writes.
// argv: regionName maxStats maxColumns nameBytes iterations

import { attachRegion } from '../../src/hot_restart/shared_memory';
import { SharedStatsStore } from '../../src/stats/store';

const [name, maxStats, maxColumns, nameBytes, iterations] = process.argv.slice(2);
const region = attachRegion(name!, { maxStats: Number(maxStats), maxColumns: Number(maxColumns), nameBytes: Number(nameBytes) });
const store = new SharedStatsStore(region, region.claimColumn(0, process.pid));
const n = Number(iterations);
// Names are interned inside the loop on purpose: concurrent first inserts of one name race.
for (let i = 0; i < n; i++) {
  store.counter(`race.counter_${i % 64}`).inc();
  store.counter('shared.requests').inc();
  const g = store.gauge('shared.active');
  g.inc();
  if (i % 2 === 0) g.dec();
}
process.stdout.write('done\n');
