// What Envoy 1.16's metrics_service sink sends at a flush: a Prometheus MetricFamily per stat,
// named by its full name and stamped with the flush's time. A counter carries its value, or its
// increase since the previous flush (report_counters_as_deltas); a gauge its value; a histogram
// two families, a SUMMARY of Envoy's quantiles (1.16 sets neither its count nor its sum) and a
// HISTOGRAM of the count, the sum and cumulative bucket counts, both over the samples of the
// interval the flush ended (NaN quantiles when it had none). Counters
// and gauges written to since they were created are sent, histograms with samples since start,
// counters first, then gauges, then histograms. Pure: plain objects as protobufjs encodes them
// (io.prometheus.client.MetricFamily, snake_case fields, enums by number).

import type { HistogramSummary } from '../sample';
import type { SinkSnapshot } from './stats_sink';

/** Envoy's HistogramStatisticsImpl::supportedQuantiles. */
export const SUPPORTED_QUANTILES: readonly number[] = [0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 1];

/** io.prometheus.client.MetricType, by number. */
export const METRIC_TYPE = { COUNTER: 0, GAUGE: 1, SUMMARY: 2, HISTOGRAM: 4 } as const;

export interface Metric {
  readonly timestamp_ms: number;
  readonly counter?: { readonly value: number };
  readonly gauge?: { readonly value: number };
  readonly summary?: { readonly quantile: readonly { readonly quantile: number; readonly value: number }[] };
  readonly histogram?: {
    readonly sample_count: number;
    readonly sample_sum: number;
    readonly bucket: readonly { readonly upper_bound: number; readonly cumulative_count: number }[];
  };
}

export interface MetricFamily {
  readonly name: string;
  readonly type: (typeof METRIC_TYPE)[keyof typeof METRIC_TYPE];
  readonly metric: readonly Metric[];
}

export interface MetricFamilyOptions {
  readonly countersAsDeltas: boolean;
  /** The bucket bounds of a histogram, ascending, by its full name. */
  readonly buckets: (histogramName: string) => readonly number[];
}

export function metricFamilies(snapshot: SinkSnapshot, options: MetricFamilyOptions): MetricFamily[] {
  const { scalars, counterDeltas, timestampMs } = snapshot;
  const families: MetricFamily[] = [];
  for (const counters of [true, false]) {
    for (let i = 0; i < scalars.length; i++) {
      if (scalars.isCounter(i) !== counters || !scalars.used(i)) continue;
      const name = scalars.name(i);
      if (counters) {
        const value = options.countersAsDeltas ? counterDeltas[i]! : scalars.value(i);
        families.push({ name, type: METRIC_TYPE.COUNTER, metric: [{ timestamp_ms: timestampMs, counter: { value } }] });
      } else {
        families.push({ name, type: METRIC_TYPE.GAUGE, metric: [{ timestamp_ms: timestampMs, gauge: { value: scalars.value(i) } }] });
      }
    }
  }
  for (const histogram of snapshot.histograms) {
    if (!histogram.used) continue;
    const interval = histogram.interval;
    const sampleCount = interval?.count ?? 0;
    const sampleSum = interval?.sum ?? 0;
    const quantile = SUPPORTED_QUANTILES.map((q) => ({ quantile: q, value: interval === null ? NaN : interval.quantile(q) }));
    families.push({
      name: histogram.name,
      type: METRIC_TYPE.SUMMARY,
      metric: [{ timestamp_ms: timestampMs, summary: { quantile } }],
    });
    families.push({
      name: histogram.name,
      type: METRIC_TYPE.HISTOGRAM,
      metric: [{ timestamp_ms: timestampMs, histogram: { sample_count: sampleCount, sample_sum: sampleSum, bucket: buckets(interval, options.buckets(histogram.name)) } }],
    });
  }
  return families;
}

function buckets(interval: HistogramSummary | null, bounds: readonly number[]): { upper_bound: number; cumulative_count: number }[] {
  return bounds.map((bound) => ({ upper_bound: bound, cumulative_count: interval === null ? 0 : interval.countAtOrBelow(bound) }));
}
