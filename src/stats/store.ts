// The writer side of the stats region: one process, one column. A handle is made once (a name
// lookup, and this column's value block for the stat's chunk on first use); after that an
// increment is a single store into a Float64Array over mapped memory, and a histogram sample
// one Uint32Array increment plus its sum.

import { bucketIndex, BUCKET_COUNT } from './histogram_buckets';
import { HostStatSum } from './host_stat_sum';
import { HostTable } from './host_table';
import { NameTable, SlotRecord, StatGroup } from './name_table';
import { RecentLookups } from './recent_lookups';
import { StatsReader } from './reader';
import { StatsRegion } from '../shared_memory/region';
import { CHUNK_SHIFT, CHUNK_SLOTS, HISTOGRAM_SUM_BYTES, HOST_STAT_NAMES, type HostStatName, SlotField, SlotFlag, StatKind } from '../shared_memory/region_layout';
import { offsetOf, StatsMemoryError } from '../shared_memory/segments';
import { HeapMemory } from '../shared_memory/shared_memory_source';
import { SharedCounts, sharedCountsBytes } from './shared_counts';
import type { Counter, Gauge, GaugeImportMode, Histogram, HistogramUnit, HostSlot, HostStats, ScalarSet, Scope, StatCell, StatReader, StatsStore } from './stats';

/** Stats that found no room in shared memory (Envoy's name from its fixed-region days). */
export const STATS_OVERFLOW = 'stats.overflow';

/** Bytes of one writer's block for one histogram: the sum, then the bucket counts. */
export const HISTOGRAM_BLOCK_BYTES = HISTOGRAM_SUM_BYTES + BUCKET_COUNT * 4;

export class CellsMismatchError extends Error {}

abstract class Metric {
  private fresh = true;

  constructor(
    readonly name: string,
    protected readonly reader: StatsReader,
    protected readonly slot: number,
    private readonly record: SlotRecord,
  ) {}

  /** The first write from this process marks the stat used for ?usedonly; later ones skip it. */
  protected touch(): void {
    if (this.fresh) {
      this.fresh = false;
      Atomics.store(this.record.words, this.record.index + SlotField.Used, 1);
    }
  }
}

abstract class CellMetric extends Metric {
  constructor(name: string, reader: StatsReader, slot: number, record: SlotRecord, protected readonly cells: Float64Array, protected readonly cell: number) {
    super(name, reader, slot, record);
  }

  statCell(): StatCell {
    this.touch();
    return { cells: this.cells, index: this.cell };
  }
}

class SharedCounter extends CellMetric implements Counter {
  inc(): void {
    this.touch();
    this.cells[this.cell]! += 1;
  }

  add(n: number): void {
    this.touch();
    this.cells[this.cell]! += n;
  }

  value(): number {
    return this.reader.counterValue(this.slot);
  }
}

class SharedGauge extends CellMetric implements Gauge {
  constructor(name: string, reader: StatsReader, slot: number, record: SlotRecord, cells: Float64Array, cell: number, private readonly neverImport: boolean) {
    super(name, reader, slot, record, cells, cell);
  }

  inc(): void {
    this.touch();
    this.cells[this.cell]! += 1;
  }

  dec(): void {
    this.touch();
    this.cells[this.cell]! -= 1;
  }

  add(n: number): void {
    this.touch();
    this.cells[this.cell]! += n;
  }

  sub(n: number): void {
    this.touch();
    this.cells[this.cell]! -= n;
  }

  set(v: number): void {
    this.touch();
    this.cells[this.cell] = v;
  }

  value(): number {
    return this.reader.gaugeValue(this.slot, this.neverImport);
  }
}

class SharedHistogram extends Metric implements Histogram {
  private buckets: Uint32Array | null = null;
  private bucketBase = 0;
  private sums: Float64Array | null = null;
  private sumIndex = 0;

  constructor(name: string, reader: StatsReader, slot: number, record: SlotRecord, readonly unit: HistogramUnit, private readonly store: SharedStatsStore) {
    super(name, reader, slot, record);
  }

  recordValue(value: number): void {
    if (this.buckets === null) this.attach();
    const index = bucketIndex(value);
    this.buckets![this.bucketBase + index]! += 1;
    this.sums![this.sumIndex]! += value > 0 ? Math.round(value) : 0;
  }

  /** This writer's block is made on the first sample: a histogram never recorded costs none. */
  private attach(): void {
    this.touch();
    const block = this.store.histogramBlock(this.slot, true);
    const segments = this.store.region.segments;
    this.buckets = segments.u32(block);
    this.bucketBase = (offsetOf(block) + HISTOGRAM_SUM_BYTES) / 4;
    this.sums = segments.f64(block);
    this.sumIndex = offsetOf(block) / 8;
  }
}

/** One writer's cell of a per-host statistic; its value is the sum over every writer. */
class HostCell {
  constructor(readonly name: string, protected readonly cells: Float64Array, protected readonly cell: number, private readonly read: () => number) {}

  inc(): void {
    this.cells[this.cell]! += 1;
  }

  add(n: number): void {
    this.cells[this.cell]! += n;
  }

  value(): number {
    return this.read();
  }

  statCell(): StatCell {
    return { cells: this.cells, index: this.cell };
  }
}

class HostGauge extends HostCell implements Gauge {
  dec(): void {
    this.cells[this.cell]! -= 1;
  }

  sub(n: number): void {
    this.cells[this.cell]! -= n;
  }

  set(v: number): void {
    this.cells[this.cell] = v;
  }
}

/**
 * A stat the region had no room for (Envoy's stats overflow): it counts inside its process
 * only, and `stats.overflow` says how many there are.
 */
class LocalStat implements Counter, Gauge, Histogram {
  private current = 0;

  constructor(readonly name: string) {}

  inc(): void {
    this.current += 1;
  }

  dec(): void {
    this.current -= 1;
  }

  add(n: number): void {
    this.current += n;
  }

  sub(n: number): void {
    this.current -= n;
  }

  set(v: number): void {
    this.current = v;
  }

  recordValue(): void {
    this.current += 1;
  }

  statCell(): null {
    return null;
  }

  value(): number {
    return this.current;
  }
}

class PrefixScope implements Scope {
  constructor(private readonly store: SharedStatsStore, private readonly prefix: string) {}

  counter(name: string): Counter {
    return this.store.counter(`${this.prefix}.${name}`);
  }

  gauge(name: string, mode?: GaugeImportMode): Gauge {
    return this.store.gauge(`${this.prefix}.${name}`, mode);
  }

  histogram(name: string, unit: HistogramUnit): Histogram {
    return this.store.histogram(`${this.prefix}.${name}`, unit);
  }

  scope(prefix: string): Scope {
    return new PrefixScope(this.store, `${this.prefix}.${prefix}`);
  }
}

export class SharedStatsStore implements StatsStore {
  readonly names: NameTable;
  readonly hosts: HostTable;
  readonly reader: StatsReader;
  /**
   * This process's lookups of a stat by name string (Envoy's symbol table lookups): every call
   * that turns a name into a stat, whether this process has a handle for it already or not.
   */
  readonly recentLookups = new RecentLookups();
  /** Where this process's lookup total is published (server.stats_recent_lookups); see publishLookupTotal. */
  private lookupTotal: Gauge | null = null;
  private readonly counters = new Map<string, Counter>();
  private readonly gauges = new Map<string, Gauge>();
  private readonly histograms = new Map<string, Histogram>();

  constructor(readonly region: StatsRegion, readonly column: number) {
    this.names = new NameTable(region);
    this.hosts = new HostTable(region);
    this.reader = new StatsReader(region, this.names);
  }

  /** From now on this process's part of `gauge` is its lookup total, kept current at every lookup. */
  publishLookupTotal(gauge: Gauge): void {
    this.lookupTotal = gauge;
    gauge.set(this.recentLookups.total);
  }

  /** Forgets the names remembered and restarts the total (/stats/recentlookups/clear). */
  clearRecentLookups(): void {
    this.recentLookups.clear();
    this.lookupTotal?.set(0);
  }

  private lookedUp(name: string): void {
    this.recentLookups.lookup(name);
    this.lookupTotal?.set(this.recentLookups.total);
  }

  counter(name: string): Counter {
    this.lookedUp(name);
    let c = this.counters.get(name);
    if (!c) {
      c = this.orLocal(name, () => this.counterAt(name, this.names.intern(name, StatKind.Counter, 0)));
      this.counters.set(name, c);
    }
    return c;
  }

  gauge(name: string, mode: GaugeImportMode = 'accumulate'): Gauge {
    this.lookedUp(name);
    let g = this.gauges.get(name);
    if (!g) {
      const neverImport = mode === 'never_import';
      g = this.orLocal(name, () => this.gaugeAt(name, this.names.intern(name, StatKind.Gauge, neverImport ? SlotFlag.NeverImport : 0), neverImport));
      this.gauges.set(name, g);
    }
    return g;
  }

  /**
   * The counters, then the gauges, named `<prefix><name>`, found or made in one pass over the
   * names (NameTable.internAll), each still a lookup. The handles are the caller's own, not the
   * ones counter() and gauge() keep by name: for a set its owner holds (a cluster's membership
   * stats, six for each of 10,000 clusters at start, cost 4.7 us each one by one).
   */
  scalars(prefix: string, counters: readonly string[], gauges: readonly string[], mode: GaugeImportMode = 'accumulate'): ScalarSet {
    const neverImport = mode === 'never_import';
    const groups: StatGroup[] = [
      { scope: '', names: counters, kind: StatKind.Counter, flags: 0 },
      { scope: '', names: gauges, kind: StatKind.Gauge, flags: neverImport ? SlotFlag.NeverImport : 0 },
    ];
    try {
      const slots = this.names.internAll(prefix, groups);
      const set = {
        counters: counters.map((name, i) => this.counterAt(prefix + name, slots[i]!)),
        gauges: gauges.map((name, i) => this.gaugeAt(prefix + name, slots[counters.length + i]!, neverImport)),
      };
      this.lookedUpAll(prefix, groups);
      return set;
    } catch (e) {
      if (!(e instanceof StatsMemoryError)) throw e;
      // Out of room: one by one, each that fits shared and the others local (see orLocal).
      return { counters: counters.map((name) => this.counter(prefix + name)), gauges: gauges.map((name) => this.gauge(prefix + name, mode)) };
    }
  }

  private counterAt(name: string, slot: number): SharedCounter {
    const [cells, cell] = this.cell(slot);
    return new SharedCounter(name, this.reader, slot, this.names.record(slot)!, cells, cell);
  }

  private gaugeAt(name: string, slot: number, neverImport: boolean): SharedGauge {
    const [cells, cell] = this.cell(slot);
    return new SharedGauge(name, this.reader, slot, this.names.record(slot)!, cells, cell, neverImport);
  }

  histogram(name: string, unit: HistogramUnit): Histogram {
    this.lookedUp(name);
    let h = this.histograms.get(name);
    if (!h) {
      h = this.orLocal(name, () => {
        const slot = this.names.intern(name, StatKind.Histogram, 0);
        return new SharedHistogram(name, this.reader, slot, this.names.record(slot)!, unit, this);
      });
      this.histograms.set(name, h);
    }
    return h;
  }

  /**
   * A stat created while serving must not take the process down when shared memory is full:
   * it lives in this process instead, and `stats.overflow` (declared by the supervisor, so
   * finding it needs no room) counts it.
   */
  private orLocal<T extends Counter | Gauge | Histogram>(name: string, make: () => T): T | LocalStat {
    try {
      return make();
    } catch (e) {
      if (!(e instanceof StatsMemoryError)) throw e;
      if (name !== STATS_OVERFLOW) this.counter(STATS_OVERFLOW).inc();
      return new LocalStat(name);
    }
  }

  scope(prefix: string): Scope {
    return new PrefixScope(this, prefix);
  }

  /** Declares every name of `groups` under `prefix` (see NameTable.internAll): a lookup of each. */
  declareAll(prefix: string, groups: readonly StatGroup[]): void {
    this.lookedUpAll(prefix, groups);
    this.names.internAll(prefix, groups);
  }

  private lookedUpAll(prefix: string, groups: readonly StatGroup[]): void {
    const count = groups.reduce((n, group) => n + group.names.length, 0);
    this.recentLookups.lookupAll(count, () => groups.flatMap((group) => group.names.map((name) => prefix + group.scope + name)));
    this.lookupTotal?.set(this.recentLookups.total);
  }

  /** This writer's statistics of a host slot the supervisor allocated. */
  hostStats(host: HostSlot): HostStats {
    const cells = this.hosts.cells(host.slot, this.column, true);
    const read = (i: number) => () => this.hosts.statSum(host, i);
    const c = (i: number) => new HostCell(HOST_STAT_NAMES[i]!, cells.view, cells.base + i, read(i));
    const g = (i: number) => new HostGauge(HOST_STAT_NAMES[i]!, cells.view, cells.base + i, read(i));
    const at = (name: (typeof HOST_STAT_NAMES)[number]) => HOST_STAT_NAMES.indexOf(name);
    return {
      cx_total: c(at('cx_total')),
      cx_active: g(at('cx_active')),
      cx_connect_fail: c(at('cx_connect_fail')),
      rq_total: c(at('rq_total')),
      rq_timeout: c(at('rq_timeout')),
      rq_success: c(at('rq_success')),
      rq_error: c(at('rq_error')),
      rq_active: g(at('rq_active')),
    };
  }

  hostStatSum(host: HostSlot, stat: HostStatName): StatReader {
    return new HostStatSum(this.hosts, host.slot, stat);
  }

  hostRecord(host: HostSlot): { words: Int32Array; index: number } {
    return this.hosts.record(host.slot);
  }

  /**
   * `count` counts shared by every writer under `name` (limits shared by all workers, like a
   * circuit breaker's open connections), zero when first made. Never listed by /stats, nor
   * counted as a lookup: Envoy's resource managers are no stats.
   */
  cells(name: string, count: number): SharedCounts {
    return this.cellsOf(name, count);
  }

  private cellsOf(name: string, count: number): SharedCounts {
    const slot = this.names.intern(name, StatKind.Cells, 0);
    const { words, index } = this.names.record(slot)!;
    const block = this.region.segments.readOrAllocate(words, index + SlotField.ObjectAddress, sharedCountsBytes(count));
    const recorded = Atomics.compareExchange(words, index + SlotField.ObjectLength, 0, count);
    if (recorded !== 0 && recorded !== count) {
      throw new CellsMismatchError(`shared cells '${name}' exist with ${recorded} cells, not ${count}`);
    }
    return new SharedCounts(this.region.segments.i32(block), offsetOf(block) / 4, count, this.column);
  }

  /**
   * The counts `cells(name, count)` made, or null while no process has made them: a reader of
   * thousands of clusters' counts must not allocate blocks for those that never had traffic.
   */
  existingCells(name: string, count: number): SharedCounts | null {
    // Looked up, not interned: 10,000 clusters no worker has used yet leave no slots behind.
    // A probe, repeated every flush, is not a lookup of a stat (recentLookups).
    const slot = this.names.lookup(name);
    if (slot < 0) return null;
    const { words, index } = this.names.record(slot)!;
    if (Atomics.load(words, index + SlotField.ObjectLength) !== count) return null;
    return this.cellsOf(name, count);
  }

  /** This column's block of a histogram (allocated on its first sample when `allocate`). */
  histogramBlock(slot: number, allocate: boolean): number {
    const value = this.names.valueBlock(slot >>> CHUNK_SHIFT, this.column, allocate);
    if (value === 0) return 0;
    const words = this.region.segments.i32(value);
    const at = offsetOf(value) / 4 + (slot & (CHUNK_SLOTS - 1)) * 2;
    return this.region.segments.readOrAllocate(words, at, HISTOGRAM_BLOCK_BYTES);
  }

  /** Name -> value of every counter and gauge (tests and diagnostics). */
  snapshot(): Map<string, number> {
    const scalars = this.reader.scalars();
    return new Map(Array.from({ length: scalars.length }, (_, i) => [scalars.name(i), scalars.value(i)]));
  }

  /** This column's cell for `slot`: its chunk's value block is made on first use. */
  private cell(slot: number): [Float64Array, number] {
    const block = this.names.valueBlock(slot >>> CHUNK_SHIFT, this.column, true);
    return [this.region.segments.f64(block), offsetOf(block) / 8 + (slot & (CHUNK_SLOTS - 1))];
  }
}

/** An in-process region over HeapMemory: the same code as shared memory, for tests. */
export function createHeapStatsStore(segmentBytes = 1 << 20): SharedStatsStore {
  const region = StatsRegion.create({ memory: new HeapMemory(), name: '/heap_stats', pid: process.pid, segmentBytes }, 0, Date.now());
  return new SharedStatsStore(region, region.claimColumn(0, process.pid));
}
