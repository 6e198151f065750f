// metricFamilies (src/stats/sinks/metric_families.ts): what Envoy 1.16's metrics_service sink
// sends of a flush, as the Prometheus data model's MetricFamily messages.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { METRIC_TYPE, metricFamilies, SUPPORTED_QUANTILES } from '../../src/stats/sinks/metric_families';
import type { SinkSnapshot } from '../../src/stats/sinks/stats_sink';
import { counter, gauge, histogram, scalarList } from '../helpers/histogram_samples';

const snapshot: SinkSnapshot = {
  scalars: scalarList([counter('a.total', 10), gauge('b.active', 3), counter('c.unused', 0, false), gauge('d.unused', 0, false)]),
  counterDeltas: Float64Array.from([4, 0, 0, 0]),
  histograms: [histogram('e.time', [1, 5, 5, 20], [5, 5, 20]), histogram('f.idle', [7], null), histogram('g.never', [], null)],
  timestampMs: 1_600_000_000_123,
};
const buckets = () => [1, 5, 10];

test('counters carry their value, or their increase with report_counters_as_deltas; gauges their value', () => {
  for (const [countersAsDeltas, value] of [[false, 10], [true, 4]] as const) {
    const families = metricFamilies(snapshot, { countersAsDeltas, buckets });
    assert.deepEqual(families.slice(0, 2), [
      { name: 'a.total', type: METRIC_TYPE.COUNTER, metric: [{ timestamp_ms: 1_600_000_000_123, counter: { value } }] },
      { name: 'b.active', type: METRIC_TYPE.GAUGE, metric: [{ timestamp_ms: 1_600_000_000_123, gauge: { value: 3 } }] },
    ]);
  }
});

test("a histogram with samples since start: a SUMMARY of Envoy's quantiles and a HISTOGRAM, over the interval", () => {
  const families = metricFamilies(snapshot, { countersAsDeltas: false, buckets });
  assert.deepEqual(
    families.map((f) => [f.name, f.type]),
    [['a.total', 0], ['b.active', 1], ['e.time', 2], ['e.time', 4], ['f.idle', 2], ['f.idle', 4]],
  );
  const [summary, distribution] = [families[2]!.metric[0]!, families[3]!.metric[0]!];
  assert.deepEqual(summary.summary!.quantile.map((q) => q.quantile), SUPPORTED_QUANTILES);
  assert.deepEqual(SUPPORTED_QUANTILES, [0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 1]);
  assert.equal(summary.summary!.quantile[0]!.value, 5);
  assert.equal(summary.summary!.quantile.at(-1)!.value, 20);
  assert.deepEqual(distribution.histogram, {
    sample_count: 3,
    sample_sum: 30,
    bucket: [
      { upper_bound: 1, cumulative_count: 0 },
      { upper_bound: 5, cumulative_count: 2 },
      { upper_bound: 10, cumulative_count: 2 },
    ],
  });
});

test('an interval without samples: NaN quantiles, zero counts', () => {
  const families = metricFamilies(snapshot, { countersAsDeltas: false, buckets });
  const [summary, distribution] = [families[4]!.metric[0]!, families[5]!.metric[0]!];
  assert.ok(summary.summary!.quantile.every((q) => Number.isNaN(q.value)));
  assert.deepEqual(distribution.histogram, {
    sample_count: 0,
    sample_sum: 0,
    bucket: [1, 5, 10].map((bound) => ({ upper_bound: bound, cumulative_count: 0 })),
  });
});
