// The reader side of the stats region: sums each stat over the writers' columns that count for
// it (every column for counters and most gauges; the current epoch's live ones for never_import
// gauges), less the counter baselines that POST /reset_counters recorded. Writers never see the
// baselines, so an increment racing a reset is counted after it, never lost.

import { BUCKET_COUNT } from './histogram_buckets';
import type { WriterHistogram } from './histogram_merger';
import type { NameTable } from './name_table';
import type { StatsRegion } from './region';
import { CHUNK_SHIFT, CHUNK_SLOTS, ColumnState, HISTOGRAM_SUM_BYTES, MAX_COLUMNS, SlotField, SlotFlag, StatKind } from './region_layout';
import type { ScalarSample } from './sample';
import { offsetOf, Segments } from './segments';

/** One writer's data of one histogram, as it is now in the region (the merger's input). */
export interface HistogramWriterData extends WriterHistogram {
  readonly column: number;
}

export interface HistogramData {
  readonly slot: number;
  readonly name: string;
  readonly used: boolean;
  readonly writers: readonly HistogramWriterData[];
}

interface Columns {
  /** Columns whose cells count: every non-free one. */
  readonly all: readonly number[];
  /** The current epoch's live columns (never_import gauges). */
  readonly current: readonly number[];
}

export class StatsReader {
  private sortedSlots: Int32Array = new Int32Array(0);
  private sortedUpTo = 0;

  constructor(private readonly region: StatsRegion, private readonly names: NameTable) {}

  counterValue(slot: number): number {
    return this.sum(slot, this.columns().all) - this.baseline(slot);
  }

  gaugeValue(slot: number, neverImport: boolean): number {
    const cols = this.columns();
    return this.sum(slot, neverImport ? cols.current : cols.all);
  }

  /** Every counter and gauge, sorted by name. */
  scalars(): ScalarSample[] {
    const cols = this.columns();
    const out: ScalarSample[] = [];
    for (const slot of this.sorted()) {
      const { words, index } = this.names.record(slot)!;
      const info = words[index + SlotField.Info]!;
      const kind = (info & 0xff) as StatKind;
      if (kind !== StatKind.Counter && kind !== StatKind.Gauge) continue;
      const used = Atomics.load(words, index + SlotField.Used) !== 0;
      const name = this.names.name(slot);
      if (kind === StatKind.Counter) {
        out.push({ name, kind: 'counter', value: this.sum(slot, cols.all) - this.baseline(slot), used });
      } else {
        const neverImport = ((info >>> 8) & SlotFlag.NeverImport) !== 0;
        out.push({ name, kind: 'gauge', value: this.sum(slot, neverImport ? cols.current : cols.all), used });
      }
    }
    return out;
  }

  /** Every histogram, sorted by name, with the blocks of the writers that recorded into it. */
  histograms(): HistogramData[] {
    const cols = this.columns().all;
    const segments = this.region.segments;
    const out: HistogramData[] = [];
    for (const slot of this.sorted()) {
      const { words, index } = this.names.record(slot)!;
      if ((words[index + SlotField.Info]! & 0xff) !== StatKind.Histogram) continue;
      const writers: HistogramWriterData[] = [];
      for (const column of cols) {
        const block = this.histogramBlock(slot, column);
        if (block === 0) continue;
        const first = (offsetOf(block) + HISTOGRAM_SUM_BYTES) / 4;
        writers.push({
          column,
          buckets: segments.u32(block).subarray(first, first + BUCKET_COUNT),
          sum: segments.f64(block)[offsetOf(block) / 8]!,
        });
      }
      const used = Atomics.load(words, index + SlotField.Used) !== 0;
      out.push({ slot, name: this.names.name(slot), used, writers });
    }
    return out;
  }

  /** Column `column`'s block of histogram `slot`, 0 when that writer never recorded into it. */
  histogramBlock(slot: number, column: number): number {
    const value = this.names.valueBlock(slot >>> CHUNK_SHIFT, column, false);
    if (value === 0) return 0;
    return Segments.read(this.region.segments.i32(value), offsetOf(value) / 4 + (slot & (CHUNK_SLOTS - 1)) * 2);
  }

  /**
   * POST /reset_counters: every counter reads 0 from here on. Only baselines change; the
   * writers' cells keep counting, so nothing they add meanwhile is lost.
   */
  resetCounters(): void {
    const all = this.columns().all;
    this.names.forEachReady((slot, kind) => {
      if (kind !== StatKind.Counter) return;
      const block = this.names.baselineBlock(slot >>> CHUNK_SHIFT, true);
      this.region.segments.f64(block)[offsetOf(block) / 8 + (slot & (CHUNK_SLOTS - 1))] = this.sum(slot, all);
    });
  }

  /** Published slots in name order; names added since the last call are merged in. */
  sorted(): Int32Array {
    const count = this.names.slotCount;
    if (count === this.sortedUpTo) return this.sortedSlots;
    const fresh: number[] = [];
    this.names.forEachReady((slot) => {
      if (slot >= this.sortedUpTo) fresh.push(slot);
    });
    const name = (slot: number) => this.names.name(slot);
    fresh.sort((a, b) => compare(name(a), name(b)));
    const merged = new Int32Array(this.sortedSlots.length + fresh.length);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < this.sortedSlots.length && j < fresh.length) {
      merged[k++] = compare(name(this.sortedSlots[i]!), name(fresh[j]!)) <= 0 ? this.sortedSlots[i++]! : fresh[j++]!;
    }
    while (i < this.sortedSlots.length) merged[k++] = this.sortedSlots[i++]!;
    while (j < fresh.length) merged[k++] = fresh[j++]!;
    this.sortedSlots = merged;
    // A slot still being written is not Ready yet: pick it up on a later call.
    this.sortedUpTo = this.firstUnready(count);
    return merged;
  }

  private firstUnready(count: number): number {
    let upTo = count;
    for (let slot = this.sortedUpTo; slot < count; slot++) {
      const record = this.names.record(slot);
      if (record === null || Atomics.load(record.words, record.index + SlotField.State) === 0) {
        upTo = slot;
        break;
      }
    }
    return upTo;
  }

  private columns(): Columns {
    const epoch = this.region.currentEpoch;
    const all: number[] = [];
    const current: number[] = [];
    for (let col = 0; col < MAX_COLUMNS; col++) {
      const state = this.region.columnState(col);
      if (state === ColumnState.Free) continue;
      all.push(col);
      if (state === ColumnState.Live && this.region.columnEpoch(col) === epoch) current.push(col);
    }
    return { all, current };
  }

  private sum(slot: number, cols: readonly number[]): number {
    const c = slot >>> CHUNK_SHIFT;
    const i = slot & (CHUNK_SLOTS - 1);
    let sum = 0;
    for (const col of cols) {
      const block = this.names.valueBlock(c, col, false);
      if (block !== 0) sum += this.region.segments.f64(block)[offsetOf(block) / 8 + i]!;
    }
    return sum;
  }

  private baseline(slot: number): number {
    const block = this.names.baselineBlock(slot >>> CHUNK_SHIFT, false);
    return block === 0 ? 0 : this.region.segments.f64(block)[offsetOf(block) / 8 + (slot & (CHUNK_SLOTS - 1))]!;
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
