// The hosts section: per-host statistics (GET /clusters) and a health-flags word per host, in
// slots that are reused. The supervisor allocates a slot when a host joins a cluster and frees
// it when the host leaves, so hosts that come and go with DNS or EDS do not grow the region;
// each reuse bumps the slot's generation, which tells a reader holding an old slot number that
// the host it meant is gone. Writers count into their own column's cells, like named stats.

import {
  HOST_CHUNK_BLOCK_BYTES,
  HOST_CHUNK_HEADER_WORDS,
  HOST_CHUNK_SHIFT,
  HOST_CHUNK_SLOTS,
  HOST_OUTLIER_WORDS,
  HOST_RECORD_WORDS,
  HOST_STAT_NAMES,
  HOST_STATS,
  HOST_VALUE_BLOCK_BYTES,
  HostRecordField,
  HostsField,
  HostStatName,
  HOSTS_HEADER_WORDS,
  MAX_COLUMNS,
  MAX_HOST_CHUNKS,
  SectionKind,
} from '../shared_memory/region_layout';
import type { SectionView, StatsRegion } from '../shared_memory/region';
import { ColumnState } from '../shared_memory/region_layout';
import { Address, offsetOf, Segments, StatsMemoryError } from '../shared_memory/segments';
import { withSpinLock } from '../shared_memory/spin_lock';
import type { HostSlot } from './stats';


/** One column's cells of one host: `view[base + i]` is HOST_STAT_NAMES[i]. */
export interface HostCells {
  readonly view: Float64Array;
  readonly base: number;
}

const enum SlotUse {
  Free = 0,
  Live = 1,
}

export class HostTable {
  private readonly section: SectionView;
  private readonly segments: Segments;

  constructor(private readonly region: StatsRegion) {
    this.section = region.section(SectionKind.Hosts);
    this.segments = region.segments;
  }

  /** Slots ever handed out: live ones are below this. */
  get highWater(): number {
    return Atomics.load(this.section.view, this.section.base + HostsField.HighWater);
  }

  /** A zeroed slot for a new host: a freed one if any, else the next never used. */
  allocate(): HostSlot {
    const { view, base } = this.section;
    return withSpinLock(view, base + HostsField.Lock, this.region.options.pid, this.segments.onContention, () => {
      let slot: number;
      const free = view[base + HostsField.FreeHead]!;
      if (free !== 0) {
        slot = free - 1;
        view[base + HostsField.FreeHead] = this.recordWord(slot, HostRecordField.NextFree);
        // A reused slot starts from zero; one never used is zero already.
        for (let col = 0; col < MAX_COLUMNS; col++) {
          const cells = this.cells(slot, col, false);
          if (cells) cells.view.fill(0, cells.base, cells.base + HOST_STATS);
        }
      } else {
        slot = view[base + HostsField.HighWater]!;
        if (slot >>> HOST_CHUNK_SHIFT >= MAX_HOST_CHUNKS) {
          throw new StatsMemoryError(`stats region is at its limit of ${MAX_HOST_CHUNKS * HOST_CHUNK_SLOTS} hosts`);
        }
        this.chunk(slot >>> HOST_CHUNK_SHIFT, true);
        Atomics.store(view, base + HostsField.HighWater, slot + 1);
      }
      this.setRecordWord(slot, HostRecordField.HealthFlags, 0);
      // A reused slot's outlier counts were its last host's.
      const record = this.record(slot);
      for (let i = 0; i < HOST_OUTLIER_WORDS; i++) Atomics.store(record.words, record.index + HostRecordField.Consecutive5xx + i, 0);
      this.setRecordWord(slot, HostRecordField.State, SlotUse.Live);
      return { slot, generation: this.recordWord(slot, HostRecordField.Generation) };
    });
  }

  /** Returns a slot to the free list; a reader holding its old generation sees it gone. */
  free(host: HostSlot): void {
    const { view, base } = this.section;
    withSpinLock(view, base + HostsField.Lock, this.region.options.pid, this.segments.onContention, () => {
      if (!this.isLive(host)) return;
      this.setRecordWord(host.slot, HostRecordField.State, SlotUse.Free);
      this.setRecordWord(host.slot, HostRecordField.Generation, (host.generation + 1) | 0);
      this.setRecordWord(host.slot, HostRecordField.NextFree, view[base + HostsField.FreeHead]!);
      view[base + HostsField.FreeHead] = host.slot + 1;
    });
  }

  isLive(host: HostSlot): boolean {
    return (
      this.recordWord(host.slot, HostRecordField.State) === SlotUse.Live &&
      this.recordWord(host.slot, HostRecordField.Generation) === host.generation
    );
  }

  /** A writer's cells for `slot`; with `allocate`, its column's block is made on first use. */
  cells(slot: number, column: number, allocate: true): HostCells;
  cells(slot: number, column: number, allocate: boolean): HostCells | null;
  cells(slot: number, column: number, allocate: boolean): HostCells | null {
    const chunk = this.chunk(slot >>> HOST_CHUNK_SHIFT, allocate);
    if (chunk === 0) return null;
    const words = this.segments.i32(chunk);
    const at = offsetOf(chunk) / 4 + column * 2;
    const block = allocate ? this.segments.readOrAllocate(words, at, HOST_VALUE_BLOCK_BYTES) : Segments.read(words, at);
    if (block === 0) return null;
    return { view: this.segments.f64(block), base: offsetOf(block) / 8 + (slot & (HOST_CHUNK_SLOTS - 1)) * HOST_STATS };
  }

  /** The shared health-flags word of `slot`: `Atomics` on `words[index]`. */
  healthFlags(slot: number): { words: Int32Array; index: number } {
    const chunk = this.chunk(slot >>> HOST_CHUNK_SHIFT, false);
    return { words: this.segments.i32(chunk), index: this.recordIndex(chunk, slot) + HostRecordField.HealthFlags };
  }

  /** The record of `slot`: its HostRecordField words are `words[index + field]`, for Atomics. */
  record(slot: number): { words: Int32Array; index: number } {
    const chunk = this.chunk(slot >>> HOST_CHUNK_SHIFT, false);
    return { words: this.segments.i32(chunk), index: this.recordIndex(chunk, slot) };
  }

  /** The statistics of a live host summed over the columns that count; null once it is gone. */
  read(host: HostSlot): Record<HostStatName, number> | null {
    if (!this.isLive(host)) return null;
    const sums = new Float64Array(HOST_STATS);
    for (let col = 0; col < MAX_COLUMNS; col++) {
      if (this.region.columnState(col) === ColumnState.Free) continue;
      const cells = this.cells(host.slot, col, false);
      if (!cells) continue;
      for (let i = 0; i < HOST_STATS; i++) sums[i]! += cells.view[cells.base + i]!;
    }
    const out = {} as Record<HostStatName, number>;
    HOST_STAT_NAMES.forEach((name, i) => (out[name] = sums[i]!));
    return out;
  }

  /**
   * One statistic of a live host summed over the columns that count, without allocating:
   * what a load balancer reads at each pick (least request). 0 once the host is gone.
   */
  statSum(host: HostSlot, stat: number): number {
    if (!this.isLive(host)) return 0;
    let sum = 0;
    for (let col = 0; col < MAX_COLUMNS; col++) {
      if (this.region.columnState(col) === ColumnState.Free) continue;
      const cells = this.cells(host.slot, col, false);
      if (cells) sum += cells.view[cells.base + stat]!;
    }
    return sum;
  }

  /** Changes whenever a block is made anywhere in the region: when located cells may be missing some. */
  get allocationMark(): number {
    return this.segments.allocationMark;
  }

  /**
   * Where every writer that has made its block keeps statistic `stat` of `slot`, for a reader
   * that sums them repeatedly (HostStatSum). A free column's cells are zero, so all count.
   */
  statCells(slot: number, stat: number): { views: Float64Array[]; indexes: number[] } {
    const views: Float64Array[] = [];
    const indexes: number[] = [];
    for (let col = 0; col < MAX_COLUMNS; col++) {
      const cells = this.cells(slot, col, false);
      if (cells === null) continue;
      views.push(cells.view);
      indexes.push(cells.base + stat);
    }
    return { views, indexes };
  }

  /** Calls `fn` with each allocated host chunk's cells of `column` (folding a column). */
  forEachColumnBlock(column: number, fn: (firstSlot: number, view: Float64Array, base: number, slots: number) => void): void {
    const high = this.highWater;
    for (let c = 0; c << HOST_CHUNK_SHIFT < high; c++) {
      const chunk = this.chunk(c, false);
      if (chunk === 0) continue;
      const block = Segments.read(this.segments.i32(chunk), offsetOf(chunk) / 4 + column * 2);
      if (block !== 0) fn(c << HOST_CHUNK_SHIFT, this.segments.f64(block), offsetOf(block) / 8, HOST_CHUNK_SLOTS);
    }
  }

  private chunk(c: number, allocate: boolean): Address {
    const { view, base } = this.section;
    const at = base + HOSTS_HEADER_WORDS + c * 2;
    return allocate ? this.segments.readOrAllocate(view, at, HOST_CHUNK_BLOCK_BYTES) : Segments.read(view, at);
  }

  private recordIndex(chunk: Address, slot: number): number {
    return offsetOf(chunk) / 4 + HOST_CHUNK_HEADER_WORDS + (slot & (HOST_CHUNK_SLOTS - 1)) * HOST_RECORD_WORDS;
  }

  private recordWord(slot: number, field: HostRecordField): number {
    const chunk = this.chunk(slot >>> HOST_CHUNK_SHIFT, false);
    return Atomics.load(this.segments.i32(chunk), this.recordIndex(chunk, slot) + field);
  }

  private setRecordWord(slot: number, field: HostRecordField, value: number): void {
    const chunk = this.chunk(slot >>> HOST_CHUNK_SHIFT, false);
    Atomics.store(this.segments.i32(chunk), this.recordIndex(chunk, slot) + field, value);
  }
}
