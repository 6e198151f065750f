// Housekeeping of the stats columns across hot restarts and worker deaths, done by the newest
// supervisor only (the one process that also serves admin, so no reader sees a fold half done):
// - a column whose owning supervisor died without retiring it (a crash) is retired;
// - a retired column's counters and histogram samples are added into the supervisor's own
//   column and the column is freed for reuse, so restarts never run out of columns and totals
//   never go backwards. Its gauges were zeroed when it retired: its connections died with it.

import { BUCKET_COUNT } from './histogram_buckets';
import type { HostTable } from './host_table';
import type { NameTable } from './name_table';
import { processAlive } from '../shared_memory/process_alive';
import type { StatsRegion } from '../shared_memory/region';
import { CHUNK_SHIFT, CHUNK_SLOTS, ColumnState, HOST_STAT_NAMES, HOST_STATS, MAX_COLUMNS, SlotField, StatKind } from '../shared_memory/region_layout';
import { offsetOf, Segments } from '../shared_memory/segments';
import { releaseShares } from './shared_counts';
import type { SharedStatsStore } from './store';

const HOST_GAUGES = HOST_STAT_NAMES.flatMap((name, i) => (name.endsWith('_active') ? [i] : []));

/** Clears the gauge contributions of a column whose process is gone. */
export function zeroColumnGauges(region: StatsRegion, names: NameTable, hosts: HostTable, column: number): void {
  names.forEachReady((slot, kind) => {
    if (kind === StatKind.Cells) releaseCellShares(region, names, slot, column);
    if (kind !== StatKind.Gauge) return;
    const block = names.valueBlock(slot >>> CHUNK_SHIFT, column, false);
    if (block !== 0) region.segments.f64(block)[offsetOf(block) / 8 + (slot & (CHUNK_SLOTS - 1))] = 0;
  });
  hosts.forEachColumnBlock(column, (_first, view, base, slots) => {
    for (let s = 0; s < slots; s++) for (const g of HOST_GAUGES) view[base + s * HOST_STATS + g] = 0;
  });
}

/** A shared counts block (SharedCounts) gives back what `column` still held. */
function releaseCellShares(region: StatsRegion, names: NameTable, slot: number, column: number): void {
  const { words, index } = names.record(slot)!;
  const block = Segments.read(words, index + SlotField.ObjectAddress);
  const count = Atomics.load(words, index + SlotField.ObjectLength);
  if (block === 0 || count === 0) return;
  releaseShares(region.segments.i32(block), offsetOf(block) / 4, count, column);
}

export function foldColumn(store: SharedStatsStore, from: number): void {
  const { region, names, hosts, column: into } = store;
  const segments = region.segments;
  names.forEachReady((slot, kind) => {
    const c = slot >>> CHUNK_SHIFT;
    const i = slot & (CHUNK_SLOTS - 1);
    if (kind === StatKind.Counter || kind === StatKind.Gauge) {
      const src = names.valueBlock(c, from, false);
      if (src === 0) return;
      const cells = segments.f64(src);
      const at = offsetOf(src) / 8 + i;
      if (kind === StatKind.Counter && cells[at] !== 0) {
        const dst = names.valueBlock(c, into, true);
        segments.f64(dst)[offsetOf(dst) / 8 + i]! += cells[at]!;
      }
      cells[at] = 0;
    } else if (kind === StatKind.Cells) {
      releaseCellShares(region, names, slot, from);
    } else if (kind === StatKind.Histogram) {
      const src = store.reader.histogramBlock(slot, from);
      if (src === 0) return;
      const dst = store.histogramBlock(slot, true);
      const sums = segments.f64(src);
      segments.f64(dst)[offsetOf(dst) / 8]! += sums[offsetOf(src) / 8]!;
      sums[offsetOf(src) / 8] = 0;
      const counts = segments.u32(src);
      const into = segments.u32(dst);
      const s0 = (offsetOf(src) + 8) / 4;
      const d0 = (offsetOf(dst) + 8) / 4;
      for (let b = 0; b < BUCKET_COUNT; b++) {
        into[d0 + b]! += counts[s0 + b]!;
        counts[s0 + b] = 0;
      }
    }
  });
  hosts.forEachColumnBlock(from, (first, view, base, slots) => {
    for (let s = 0; s < slots; s++) {
      const src = base + s * HOST_STATS;
      for (let k = 0; k < HOST_STATS; k++) {
        if (view[src + k] !== 0 && !HOST_GAUGES.includes(k)) {
          const dst = hosts.cells(first + s, into, true);
          dst.view[dst.base + k]! += view[src + k]!;
        }
        view[src + k] = 0;
      }
    }
  });
  region.freeColumn(from);
}

/** Returns how many columns were folded into the store's own column. */
export function reclaimColumns(store: SharedStatsStore, epoch: number): number {
  const { region } = store;
  for (const { column, pid } of region.liveColumnsOfOtherEpochs(epoch)) {
    if (pid !== 0 && !processAlive(pid)) {
      zeroColumnGauges(region, store.names, store.hosts, column);
      region.retireColumn(column);
    }
  }
  let folded = 0;
  for (let col = 0; col < MAX_COLUMNS; col++) {
    if (col !== store.column && region.columnState(col) === ColumnState.Retired) {
      foldColumn(store, col);
      folded++;
    }
  }
  return folded;
}
