// The stats API the rest of the proxy writes to. Implementations keep the numbers in a
// shared-memory region (see store.ts); an increment is a typed-array write, nothing more.

import type { SharedCounts } from './shared_counts';
import type { HostStatName } from '../shared_memory/region_layout';

/** Where this process keeps a stat's value: native code adds to `cells[index]` as JavaScript would. */
export interface StatCell {
  readonly cells: Float64Array;
  readonly index: number;
}

export interface Counter {
  readonly name: string;
  inc(): void;
  add(n: number): void;
  /** Its cell, marked used as a write marks it; null when it counts in JavaScript only. */
  statCell(): StatCell | null;
  /** Sum over every process that writes this stat (all live epochs plus retired ones). */
  value(): number;
}

export interface Gauge {
  readonly name: string;
  inc(): void;
  dec(): void;
  add(n: number): void;
  sub(n: number): void;
  /** Sets this process's contribution; the reported value is the sum of contributions. */
  set(v: number): void;
  /** As Counter's. */
  statCell(): StatCell | null;
  value(): number;
}

/** Envoy's Histogram::Unit: what a recorded value measures (Prometheus shows it nowhere yet). */
export type HistogramUnit = 'unspecified' | 'bytes' | 'microseconds' | 'milliseconds';

export interface Histogram {
  readonly name: string;
  /** Records one sample: a non-negative integer (fractions are rounded). */
  recordValue(value: number): void;
}

/**
 * How a gauge combines across hot-restart epochs (Envoy's Gauge::ImportMode):
 * `accumulate` sums every epoch's contribution (connections, requests in flight);
 * `never_import` reports only the current epoch (server.live, server.concurrency, ...).
 */
export type GaugeImportMode = 'accumulate' | 'never_import';

export interface Scope {
  /** Full name is `<prefix>.<name>`; the root scope has no prefix. */
  counter(name: string): Counter;
  gauge(name: string, mode?: GaugeImportMode): Gauge;
  histogram(name: string, unit: HistogramUnit): Histogram;
  scope(prefix: string): Scope;
}

/** The per-host statistics of GET /clusters; not listed by /stats. */
export interface HostStats {
  readonly cx_total: Counter;
  readonly cx_active: Gauge;
  readonly cx_connect_fail: Counter;
  readonly rq_total: Counter;
  readonly rq_timeout: Counter;
  readonly rq_success: Counter;
  readonly rq_error: Counter;
  readonly rq_active: Gauge;
}

/** A host's place in the region's host table (allocated by the supervisor). */
export interface HostSlot {
  readonly slot: number;
  readonly generation: number;
}

/** A value read repeatedly, kept current by its maker. */
export interface StatReader {
  value(): number;
}

/** Handles made together (StatsStore.scalars), in the order of the names asked for. */
export interface ScalarSet {
  readonly counters: readonly Counter[];
  readonly gauges: readonly Gauge[];
}

export interface StatsStore extends Scope {
  /** The counters and gauges `<prefix><name>` of a set its owner holds, made in one pass. */
  scalars(prefix: string, counters: readonly string[], gauges: readonly string[], mode?: GaugeImportMode): ScalarSet;
  hostStats(host: HostSlot): HostStats;
  /** One statistic of a host over every writer, cheap to read often (a balancer's rq_active). */
  hostStatSum(host: HostSlot, stat: HostStatName): StatReader;
  /** Counts shared by every writer, updated atomically (circuit breakers); see SharedCounts. */
  cells(name: string, count: number): SharedCounts;
  /** A host's record words shared by every writer (HostRecordField at `words[index + field]`, for Atomics). */
  hostRecord(host: HostSlot): { words: Int32Array; index: number };
}

/** A cluster's stat name (alt_stat_name or name), or an RDS route configuration's, with `:` turned into `_`. */
export function sanitizeStatName(name: string): string {
  return name.replace(/:/g, '_');
}
