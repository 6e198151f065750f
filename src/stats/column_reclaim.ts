// Housekeeping of the stats columns across hot restarts, done by the newest supervisor only
// (the one process that also serves admin, so no reader sees a fold half done):
// - a column whose owning supervisor died without retiring it (a crash) is retired;
// - a retired column's counters are added into the supervisor's own column and the column is
//   freed for reuse, so restarts never run out of columns and totals never go backwards.

import { ColumnState, StatKind } from './region_layout';
import { processAlive, StatsRegion } from './region';
import { NameTable } from './name_table';
import { zeroColumnGauges } from './store';

export function foldColumn(region: StatsRegion, names: NameTable, from: number, into: number): void {
  const { maxStats } = region.layout;
  const src = from * maxStats;
  const dst = into * maxStats;
  for (const info of names.entries()) {
    const s = src + info.slot;
    if (info.kind === StatKind.Counter) region.values[dst + info.slot]! += region.values[s]!;
    if (region.used[s]) region.used[dst + info.slot] = 1;
    region.values[s] = 0;
    region.used[s] = 0;
  }
  region.freeColumn(from);
}

/** Returns how many columns were folded into `own`. */
export function reclaimColumns(region: StatsRegion, names: NameTable, own: number, epoch: number): number {
  for (const { column, pid } of region.liveColumnsOfOtherEpochs(epoch)) {
    if (pid !== 0 && !processAlive(pid)) {
      zeroColumnGauges(region, names, column);
      region.retireColumn(column);
    }
  }
  let folded = 0;
  for (let col = 0; col < region.layout.maxColumns; col++) {
    if (col !== own && region.columnState(col) === ColumnState.Retired) {
      foldColumn(region, names, col, own);
      folded++;
    }
  }
  return folded;
}
