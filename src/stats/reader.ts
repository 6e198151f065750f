// The reader side of the stats region: sums each stat over the writers' columns that count for
// it (every column for counters and most gauges; the current epoch's live ones for never_import
// gauges), less the counter baselines that POST /reset_counters recorded. Writers never see the
// baselines, so an increment racing a reset is counted after it, never lost.

import { BUCKET_COUNT } from './histogram_buckets';
import type { HistogramWriters, WriterHistogram } from './histogram_merger';
import type { NameTable } from './name_table';
import type { StatsRegion } from '../shared_memory/region';
import {
  CHUNK_HEADER_WORDS,
  CHUNK_SHIFT,
  CHUNK_SLOTS,
  ColumnState,
  HISTOGRAM_SUM_BYTES,
  MAX_COLUMNS,
  SLOT_WORDS,
  SlotField,
  SlotFlag,
  SlotState,
  StatKind,
} from '../shared_memory/region_layout';
import type { ScalarList } from './sample';
import { mergeByName, RunListener, sortByName, sortedByName } from './name_order';
import { offsetOf, Segments } from '../shared_memory/segments';

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

/** `values()` packs a slot's kind and used flag in one byte. */
const KIND_BITS = 0x7f;
const USED_BIT = 0x80;

interface Columns {
  /** Columns whose cells count: every non-free one. */
  readonly all: readonly number[];
  /** The current epoch's live columns (never_import gauges). */
  readonly current: readonly number[];
}

/** Names sorted in one turn of the event loop by catchUp(): a few milliseconds each. */
const SORT_RUN = 16_384;

/** The kinds /stats lists: cells (circuit breaker counts) never are. */
function listed(kind: StatKind): boolean {
  return kind === StatKind.Counter || kind === StatKind.Gauge || kind === StatKind.Histogram;
}

interface UnorderedSlots {
  readonly scalars: Int32Array;
  readonly histograms: Int32Array;
}

/** Slots gathered one by one into a typed array (a million of them, with no boxed numbers). */
class SlotList {
  private list = new Int32Array(1024);
  length = 0;

  push(slot: number): void {
    if (this.length === this.list.length) {
      const grown = new Int32Array(this.list.length * 2);
      grown.set(this.list);
      this.list = grown;
    }
    this.list[this.length++] = slot;
  }

  slots(): Int32Array {
    return this.list.subarray(0, this.length);
  }
}

/** Name order of the published slots, one list per kind that /stats renders. */
interface SortedSlots {
  scalars: Int32Array;
  histograms: Int32Array;
}

/**
 * The counters and gauges of one snapshot: positions in name order into values read by slot.
 * A name is the region's, decoded once per process and only when asked.
 */
class RegionScalars implements ScalarList {
  constructor(
    private readonly names: NameTable,
    private readonly order: Int32Array,
    private readonly values: Float64Array,
    /** Kind and used flag by slot (see KIND_BITS, USED_BIT). */
    private readonly info: Uint8Array,
  ) {}

  get length(): number {
    return this.order.length;
  }

  name(i: number): string {
    return this.names.name(this.order[i]!);
  }

  nameArray(i: number): Uint8Array {
    return this.names.nameArray(this.order[i]!);
  }

  nameStart(i: number): number {
    return this.names.nameStart(this.order[i]!);
  }

  nameLength(i: number): number {
    return this.names.nameLength(this.order[i]!);
  }

  id(i: number): number {
    return this.order[i]!;
  }

  isCounter(i: number): boolean {
    return (this.info[this.order[i]!]! & KIND_BITS) === StatKind.Counter;
  }

  value(i: number): number {
    return this.values[this.order[i]!]!;
  }

  used(i: number): boolean {
    return (this.info[this.order[i]!]! & USED_BIT) !== 0;
  }
}

export class StatsReader {
  private readonly order: SortedSlots = { scalars: new Int32Array(0), histograms: new Int32Array(0) };
  /** Slots below this are settled: in `order`, dead, or cells (which /stats never lists). */
  private settledUpTo = 0;
  /** The slot count at the last merge. */
  private seenCount = 0;
  /** Slots at or above settledUpTo already in `order`, by slot. */
  private inOrder = new Uint8Array(0);
  /** The catch-up being stepped through by ordered(), if any. */
  private catching: { readonly steps: Generator<void>; done: boolean } | null = null;
  private onRun: RunListener | null = null;

  constructor(private readonly region: StatsRegion, private readonly names: NameTable) {}

  counterValue(slot: number): number {
    return this.sum(slot, this.columns().all) - this.baseline(slot);
  }

  gaugeValue(slot: number, neverImport: boolean): number {
    const cols = this.columns();
    return this.sum(slot, neverImport ? cols.current : cols.all);
  }

  /** Tells `listener` of each run of names that the sort puts in order from here on (see RunListener). */
  onSortedRuns(listener: RunListener): void {
    this.onRun = listener;
  }

  /** Every counter and gauge as it is now, sorted by name. */
  scalars(): ScalarList {
    const order = this.sorted().scalars;
    const { values, used } = this.values();
    return new RegionScalars(this.names, order, values, used);
  }

  /** Every histogram, sorted by name, with the blocks of the writers that recorded into it. */
  histograms(): HistogramData[] {
    const cols = this.columns().all;
    const order = this.sorted().histograms;
    const out: HistogramData[] = new Array(order.length);
    for (let n = 0; n < order.length; n++) {
      const slot = order[n]!;
      const { words, index } = this.names.record(slot)!;
      const used = Atomics.load(words, index + SlotField.Used) !== 0;
      out[n] = { slot, name: this.names.name(slot), used, writers: this.writersOf(slot, cols) };
    }
    return out;
  }

  /**
   * Every histogram's writers by slot, in slot order: what a flush merges. No names and no
   * sorting, so that a flush while 10,000 clusters' names are being interned costs no sort.
   */
  histogramWriters(): HistogramWriters[] {
    const cols = this.columns().all;
    const out: HistogramWriters[] = [];
    this.names.forEachReady((slot, kind) => {
      if (kind === StatKind.Histogram) out.push([slot, this.writersOf(slot, cols)]);
    });
    return out;
  }

  private writersOf(slot: number, cols: readonly number[]): HistogramWriterData[] {
    const segments = this.region.segments;
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
    return writers;
  }

  /**
   * Every counter's and gauge's value by slot, chunk by chunk (each column's block resolved once
   * per chunk), with its kind and used flag packed in `used`.
   */
  private values(): { values: Float64Array; used: Uint8Array } {
    const count = this.names.slotCount;
    const values = new Float64Array(count);
    const used = new Uint8Array(count);
    const cols = this.columns();
    const segments = this.region.segments;
    const blocks = (list: readonly number[], c: number) =>
      list.flatMap((col) => {
        const block = this.names.valueBlock(c, col, false);
        return block === 0 ? [] : [{ cells: segments.f64(block), base: offsetOf(block) / 8 }];
      });
    for (let c = 0; c << CHUNK_SHIFT < count; c++) {
      const chunk = this.names.chunk(c);
      if (chunk === 0) continue;
      const words = segments.i32(chunk);
      const all = blocks(cols.all, c);
      const current = blocks(cols.current, c);
      const baselineBlock = this.names.baselineBlock(c, false);
      const baselines = baselineBlock === 0 ? null : segments.f64(baselineBlock);
      const baselineBase = offsetOf(baselineBlock) / 8;
      const end = Math.min(CHUNK_SLOTS, count - (c << CHUNK_SHIFT));
      for (let i = 0; i < end; i++) {
        const slot = (c << CHUNK_SHIFT) + i;
        const record = offsetOf(chunk) / 4 + CHUNK_HEADER_WORDS + i * SLOT_WORDS;
        if (Atomics.load(words, record + SlotField.State) !== SlotState.Ready) continue;
        const info = words[record + SlotField.Info]!;
        const kind = info & 0xff;
        if (kind !== StatKind.Counter && kind !== StatKind.Gauge) continue;
        const from = kind === StatKind.Gauge && ((info >>> 8) & SlotFlag.NeverImport) !== 0 ? current : all;
        let sum = 0;
        for (const b of from) sum += b.cells[b.base + i]!;
        if (kind === StatKind.Counter && baselines !== null) sum -= baselines[baselineBase + i]!;
        values[slot] = sum;
        used[slot] = kind | (Atomics.load(words, record + SlotField.Used) !== 0 ? USED_BIT : 0);
      }
    }
    return { values, used };
  }

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

  /**
   * Published slots in name order, per kind; names published since the last call are merged in.
   * A slot another process is still writing (or whose chunk it failed to allocate) is looked at
   * again on later calls, without holding back the names after it.
   */
  private sorted(): SortedSlots {
    const count = this.names.slotCount;
    if (count === this.seenCount && this.settledUpTo === count) return this.order;
    this.install(this.unordered(count), count, false);
    return this.order;
  }

  /**
   * What sorted() does for the names published since, a step at a time: SORT_RUN names per
   * step (see name_order.ts), then the order of their runs. The supervisor steps it once serving,
   * a turn of the event loop per step, so that the first /stats of 10,000 clusters does not sort
   * 950,000 names at once; a /stats that comes meanwhile steps the same work rather than
   * starting its own.
   */
  *ordered(): Generator<void> {
    // Fewer new names than a run are left to the read, which sorts them in one step.
    while (this.catching !== null || this.names.slotCount - this.seenCount >= SORT_RUN) {
      const job = (this.catching ??= { steps: this.catchUp(this.names.slotCount), done: false });
      while (!job.done) {
        job.done = job.steps.next().done === true;
        if (!job.done) yield;
      }
      if (this.catching === job) this.catching = null;
    }
  }

  /** The steps of ordered(): the names published below `count`, sorted and merged in. */
  private *catchUp(count: number): Generator<void> {
    const fresh = this.unordered(count);
    // A synchronous read (scalars()) that came meanwhile sorted them all itself: the rest is wasted work.
    const overtaken = () => this.seenCount >= count;
    const scalars = yield* this.sortInSteps(fresh.scalars, overtaken);
    const histograms = scalars === null ? null : yield* this.sortInSteps(fresh.histograms, overtaken);
    if (scalars !== null && histograms !== null) this.install({ scalars, histograms }, count, true);
  }

  /** Published slots below `count` not in the order yet, by kind. */
  private unordered(count: number): UnorderedSlots {
    const scalars = new SlotList();
    const histograms = new SlotList();
    const from = this.settledUpTo;
    const inOrder = this.inOrder;
    this.names.forEachReady((slot, kind) => {
      if (slot >= count || inOrder[slot - from] === 1) return;
      if (kind === StatKind.Counter || kind === StatKind.Gauge) scalars.push(slot);
      else if (kind === StatKind.Histogram) histograms.push(slot);
    }, from);
    return { scalars: scalars.slots(), histograms: histograms.slots() };
  }

  /**
   * Merges `fresh` into the order, less any slot a call in between has merged already. `sorted`
   * when its lists are in name order already (a catch-up's).
   */
  private install(fresh: UnorderedSlots, count: number, sorted: boolean): void {
    const needed = Math.max(count, this.names.slotCount) - this.settledUpTo;
    if (this.inOrder.length < needed) {
      const grown = new Uint8Array(Math.max(needed, this.inOrder.length * 2));
      grown.set(this.inOrder);
      this.inOrder = grown;
    }
    this.order.scalars = this.mergeByName(this.order.scalars, this.missing(fresh.scalars), sorted);
    this.order.histograms = this.mergeByName(this.order.histograms, this.missing(fresh.histograms), sorted);
    this.seenCount = Math.max(this.seenCount, count);
    // A name published after the scan that found its slot empty is not in the order: settling
    // past it would leave it out of every later read.
    const from = this.settledUpTo;
    const inOrder = this.inOrder;
    const settled = this.names.firstUnsettled(from, count, (slot, kind) => listed(kind) && inOrder[slot - from] !== 1);
    if (settled > this.settledUpTo) {
      this.inOrder = this.inOrder.slice(settled - this.settledUpTo);
      this.settledUpTo = settled;
    }
  }

  /** Of `slots`, those not in the order yet, now marked as in it. */
  private missing(slots: Int32Array): Int32Array {
    const from = this.settledUpTo;
    const inOrder = this.inOrder;
    const out = new SlotList();
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      if (slot < from || inOrder[slot - from] === 1) continue;
      inOrder[slot - from] = 1;
      out.push(slot);
    }
    return out.length === slots.length ? slots : out.slots();
  }

  /** `slots` sorted by name, SORT_RUN names per step; null once `overtaken`. */
  private *sortInSteps(slots: Int32Array, overtaken: () => boolean): Generator<void, Int32Array | null> {
    const steps = sortByName(slots, this.names, SORT_RUN, this.onRun);
    for (;;) {
      const step = steps.next();
      if (step.done === true) return step.value;
      yield;
      if (overtaken()) return null;
    }
  }

  private mergeByName(sorted: Int32Array, fresh: Int32Array, freshSorted: boolean): Int32Array {
    if (fresh.length === 0) return sorted;
    return mergeByName(sorted, freshSorted ? fresh : sortedByName(fresh, this.names, this.onRun), this.names);
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
