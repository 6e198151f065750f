// A writer process for the histogram tests, as a worker is one: maps a proxy's stats region by
// name, claims a column of the current epoch and records a known series into one histogram.
// argv: regionName histogramName first step last

import { attachRegion } from '../../src/shared_memory/posix_shared_memory';
import { SharedStatsStore } from '../../src/stats/store';

const [regionName, name, first, step, last] = process.argv.slice(2);
const region = attachRegion(regionName!);
const store = new SharedStatsStore(region, region.claimColumn(region.currentEpoch, process.pid));
const histogram = store.histogram(name!, 'milliseconds');
for (let v = Number(first); v <= Number(last); v += Number(step)) histogram.recordValue(v);
process.stdout.write('done\n');
