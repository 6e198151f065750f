// The reader side of the stats region: what the admin endpoints render. Sums columns per
// slot; "used" means some writer has touched the stat (Envoy's used flag, for ?usedonly).

import { ColumnState, SlotFlag, StatKind } from './region_layout';
import { StatsRegion } from './region';
import { NameTable } from './name_table';

export interface StatSample {
  readonly name: string;
  readonly kind: 'counter' | 'gauge';
  readonly value: number;
  readonly used: boolean;
  readonly hidden: boolean;
}

export function readStats(region: StatsRegion, names: NameTable): StatSample[] {
  const { maxColumns, maxStats } = region.layout;
  const epoch = region.currentEpoch;
  const all: number[] = [];
  const current: number[] = [];
  for (let col = 0; col < maxColumns; col++) {
    const state = region.columnState(col);
    if (state === ColumnState.Free) continue;
    all.push(col);
    if (state === ColumnState.Live && region.columnEpoch(col) === epoch) current.push(col);
  }
  const out: StatSample[] = [];
  for (const info of names.entries()) {
    const cols = info.flags & SlotFlag.NeverImport ? current : all;
    let value = 0;
    let used = false;
    for (const col of cols) {
      const cell = col * maxStats + info.slot;
      value += region.values[cell]!;
      if (region.used[cell]) used = true;
    }
    out.push({
      name: info.name,
      kind: info.kind === StatKind.Counter ? 'counter' : 'gauge',
      value,
      used,
      hidden: (info.flags & SlotFlag.Hidden) !== 0,
    });
  }
  return out;
}
