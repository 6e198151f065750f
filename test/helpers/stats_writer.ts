// A second process for the stats tests: maps a region by name, claims a column and writes.
// argv: regionName iterations uniqueNames

import { attachRegion } from '../../src/shared_memory/posix_shared_memory';
import { SharedStatsStore } from '../../src/stats/store';

const [name, iterations, uniqueNames] = process.argv.slice(2);
const region = attachRegion(name!);
const store = new SharedStatsStore(region, region.claimColumn(0, process.pid));
const n = Number(iterations);
// Names are interned inside the loop on purpose: concurrent first inserts of one name race.
for (let i = 0; i < n; i++) {
  store.counter(`race.counter_${i % 64}`).inc();
  store.counter('shared.requests').inc();
  const g = store.gauge('shared.active');
  g.inc();
  if (i % 2 === 0) g.dec();
  store.histogram('shared.latency', 'milliseconds').recordValue(i % 1000);
}
// Names of this process only: together they outgrow the first segment, so every process
// allocates into segments that others created.
for (let i = 0; i < Number(uniqueNames); i++) store.counter(`own.${process.pid}.stat_${i}`).inc();
process.stdout.write('done\n');
