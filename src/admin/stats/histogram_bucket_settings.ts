// The `le` buckets /stats/prometheus shows for a histogram: stats_config's
// histogram_bucket_settings (the first rule whose matcher accepts the full stat name), else
// Envoy's defaults. Histograms record a fine log-linear distribution
// (src/stats/histogram_buckets.ts), so any bound can be read off it; the bounds are only a
// rendering choice.

import type { HistogramBucketRule } from '../../config/model';
import { stringMatcher } from '../../common/string_matcher';
import { formatG32 } from './number_format';

/** Envoy's default bounds, in milliseconds for its latency histograms. */
export const DEFAULT_BUCKETS: readonly number[] = [
  0.5, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 600000, 1800000, 3600000,
];

export interface BucketBounds {
  /** Ascending. */
  readonly values: readonly number[];
  /** Each bound as its `le` label shows it. */
  readonly labels: readonly string[];
}

function bounds(values: readonly number[]): BucketBounds {
  return { values, labels: values.map(formatG32) };
}

export class HistogramBucketSettings {
  private readonly defaults = bounds(DEFAULT_BUCKETS);
  private readonly rules: readonly { readonly matches: (name: string) => boolean; readonly bounds: BucketBounds }[];

  constructor(rules: readonly HistogramBucketRule[]) {
    this.rules = rules.map((r) => ({ matches: stringMatcher(r.match), bounds: bounds(r.buckets) }));
  }

  boundsFor(histogramName: string): BucketBounds {
    return this.rules.find((r) => r.matches(histogramName))?.bounds ?? this.defaults;
  }
}
