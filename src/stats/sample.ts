// What a reader of the stats region hands to the renderers of GET /stats: one consistent
// snapshot, already merged across writers. Values are read when the snapshot is taken; the
// renderers never read shared memory themselves.

import type { NameBytes } from './name_bytes';

/**
 * Counters and gauges, read by position: 10,000 clusters' 950,000 stats are typed arrays
 * rather than an object each. Their names are also bytes by position (NameBytes), which the
 * renderers copy without decoding them.
 */
export interface ScalarList extends NameBytes {
  readonly length: number;
  name(i: number): string;
  /** The stat's slot in the region, the same for its whole life (a cache key cheaper than the name); -1 when it has none. */
  id(i: number): number;
  isCounter(i: number): boolean;
  value(i: number): number;
  /** Written at least once since the stat was created (?usedonly). */
  used(i: number): boolean;
}

/** A histogram's samples over some period, merged across writers. */
export interface HistogramSummary {
  readonly count: number;
  readonly sum: number;
  /** The value at quantile `q` in [0, 1]; NaN when count is 0. */
  quantile(q: number): number;
  /** How many samples were at most `bound` (Prometheus's `le` buckets). */
  countAtOrBelow(bound: number): number;
  /**
   * Every sample as the whole number countAtOrBelow() takes it for, in ascending order, equal
   * ones together: `visit(value, count)` (what a statsd sink sends a line per sample of).
   */
  forEachSample(visit: (value: number, count: number) => void): void;
}

export interface HistogramSample {
  readonly name: string;
  /** As ScalarList.id; absent when it has none. */
  readonly id?: number;
  /** Recorded into since the proxy started (cumulative.count > 0): false prints `No recorded values`. */
  readonly used: boolean;
  /** Samples of the last completed stats_flush_interval; null when there were none. */
  readonly interval: HistogramSummary | null;
  /** Every sample since the proxy started. */
  readonly cumulative: HistogramSummary;
}

export interface StatsSnapshot {
  /** Counters and gauges, sorted by the bytes of their UTF-8 names, as Envoy sorts them. */
  readonly scalars: ScalarList;
  /** Histograms, sorted by name as the scalars are. */
  readonly histograms: readonly HistogramSample[];
}
