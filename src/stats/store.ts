// The writer side of the stats region: one process, one column. Handles are created once
// (a name lookup) and then each increment is a single Float64Array store on mapped memory.

import { ColumnState, DEFAULT_LAYOUT, LayoutParams, SlotFlag, StatKind } from './region_layout';
import { StatsRegion } from './region';
import { NameTable } from './name_table';
import { Counter, Gauge, GaugeImportMode, HostStats, Scope, StatsStore } from './stats';
import { readStats } from './reader';

/** Sums a slot over the columns that count for it. */
export function sumSlot(region: StatsRegion, slot: number, neverImport: boolean): number {
  const { maxColumns, maxStats } = region.layout;
  const epoch = region.currentEpoch;
  let sum = 0;
  for (let col = 0; col < maxColumns; col++) {
    const state = region.columnState(col);
    if (state === ColumnState.Free) continue;
    if (neverImport && (state !== ColumnState.Live || region.columnEpoch(col) !== epoch)) continue;
    sum += region.values[col * maxStats + slot]!;
  }
  return sum;
}

abstract class Metric {
  protected readonly cell: number;
  private fresh = true;

  constructor(
    readonly name: string,
    protected readonly region: StatsRegion,
    protected readonly slot: number,
    column: number,
  ) {
    this.cell = column * region.layout.maxStats + slot;
  }

  /** First write from this process marks the stat used for ?usedonly; later writes skip it. */
  protected touch(): void {
    if (this.fresh) {
      this.fresh = false;
      this.region.used[this.cell] = 1;
    }
  }
}

class SharedCounter extends Metric implements Counter {
  inc(): void {
    this.touch();
    this.region.values[this.cell]! += 1;
  }

  add(n: number): void {
    this.touch();
    this.region.values[this.cell]! += n;
  }

  value(): number {
    return sumSlot(this.region, this.slot, false);
  }
}

class SharedGauge extends Metric implements Gauge {
  constructor(name: string, region: StatsRegion, slot: number, column: number, private readonly neverImport: boolean) {
    super(name, region, slot, column);
  }

  inc(): void {
    this.touch();
    this.region.values[this.cell]! += 1;
  }

  dec(): void {
    this.touch();
    this.region.values[this.cell]! -= 1;
  }

  add(n: number): void {
    this.touch();
    this.region.values[this.cell]! += n;
  }

  sub(n: number): void {
    this.touch();
    this.region.values[this.cell]! -= n;
  }

  set(v: number): void {
    this.touch();
    this.region.values[this.cell] = v;
  }

  value(): number {
    return sumSlot(this.region, this.slot, this.neverImport);
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

  scope(prefix: string): Scope {
    return new PrefixScope(this.store, `${this.prefix}.${prefix}`);
  }
}

/** Name of a per-host stat in the region; hidden from /stats, read by /clusters. */
export function hostStatName(clusterStatName: string, address: string, stat: string): string {
  return `cluster.${clusterStatName}.host.${address}.${stat}`;
}

export class SharedStatsStore implements StatsStore {
  readonly names: NameTable;
  private readonly counters = new Map<string, SharedCounter>();
  private readonly gauges = new Map<string, SharedGauge>();

  constructor(readonly region: StatsRegion, readonly column: number) {
    this.names = new NameTable(region);
  }

  counter(name: string): Counter {
    return this.counterWith(name, 0);
  }

  gauge(name: string, mode: GaugeImportMode = 'accumulate'): Gauge {
    return this.gaugeWith(name, mode === 'never_import' ? SlotFlag.NeverImport : 0);
  }

  scope(prefix: string): Scope {
    return new PrefixScope(this, prefix);
  }

  hostStats(clusterStatName: string, address: string): HostStats {
    const c = (stat: string) => this.counterWith(hostStatName(clusterStatName, address, stat), SlotFlag.Hidden);
    const g = (stat: string) => this.gaugeWith(hostStatName(clusterStatName, address, stat), SlotFlag.Hidden);
    return {
      cx_total: c('cx_total'),
      cx_active: g('cx_active'),
      cx_connect_fail: c('cx_connect_fail'),
      rq_total: c('rq_total'),
      rq_timeout: c('rq_timeout'),
      rq_success: c('rq_success'),
      rq_error: c('rq_error'),
      rq_active: g('rq_active'),
    };
  }

  /** Name -> value of every stat, hidden ones included (tests and diagnostics). */
  snapshot(): Map<string, number> {
    return new Map(readStats(this.region, this.names).map((s) => [s.name, s.value]));
  }

  private counterWith(name: string, flags: number): SharedCounter {
    let c = this.counters.get(name);
    if (!c) {
      c = new SharedCounter(name, this.region, this.names.intern(name, StatKind.Counter, flags), this.column);
      this.counters.set(name, c);
    }
    return c;
  }

  private gaugeWith(name: string, flags: number): SharedGauge {
    let g = this.gauges.get(name);
    if (!g) {
      const neverImport = (flags & SlotFlag.NeverImport) !== 0;
      g = new SharedGauge(name, this.region, this.names.intern(name, StatKind.Gauge, flags), this.column, neverImport);
      this.gauges.set(name, g);
    }
    return g;
  }
}

/**
 * Clears the gauge contributions of a column whose process is gone (its connections died
 * with it); its counters stay, so totals never go backwards.
 */
export function zeroColumnGauges(region: StatsRegion, names: NameTable, column: number): void {
  const base = column * region.layout.maxStats;
  for (const info of names.entries()) {
    if (info.kind === StatKind.Gauge) region.values[base + info.slot] = 0;
  }
}

/** An in-process region over a plain ArrayBuffer: the same code as shared memory, for tests. */
export function createHeapStatsStore(params: LayoutParams = { ...DEFAULT_LAYOUT, maxStats: 8192, maxColumns: 4 }): SharedStatsStore {
  const region = StatsRegion.initialize(new ArrayBuffer(StatsRegion.bytesFor(params)), params, 0, Date.now());
  return new SharedStatsStore(region, region.claimColumn(0, process.pid));
}
