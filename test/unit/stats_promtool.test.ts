// promtool accepts what the Prometheus renderer writes: counters, gauges and histograms, with
// and without labels, custom buckets, label values that need escaping.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StatsConfig } from '../../src/config/model';
import { HistogramBucketSettings } from '../../src/admin/stats/histogram_bucket_settings';
import { PrometheusFormatter } from '../../src/admin/stats/prometheus';
import type { StatsSnapshot } from '../../src/stats/sample';
import { TagExtractor } from '../../src/admin/stats/tag_extractor';
import { counter, gauge, histogram, scalarList } from '../helpers/histogram_samples';
import { checkMetrics } from '../helpers/promtool';

const CONFIG: StatsConfig = {
  statsTags: [{ tagName: 'proxy.node', fixedValue: 'edge "1"\\a' }],
  useAllDefaultTags: true,
  histogramBucketSettings: [{ match: { kind: 'contains', value: 'rq_size', ignoreCase: false }, buckets: [0.1, 1.5, 1024] }],
};

const SNAPSHOT: StatsSnapshot = {
  scalars: scalarList([
    counter('cluster.a.upstream_rq_200', 3),
    counter('cluster.a.upstream_rq_2xx', 3),
    counter('cluster.b.upstream_rq_503', 1),
    gauge('cluster.a.upstream_cx_active', 2),
    counter('http.admin.downstream_rq_2xx', 9),
    gauge('listener.127.0.0.1_8080.downstream_cx_active', 1),
    gauge('server.live', 1),
  ]),
  histograms: [
    histogram('cluster.a.upstream_cx_connect_ms', [1, 2, 40, 900], [2]),
    histogram('cluster.a.upstream_rq_size', [10, 3000]),
    histogram('http.admin.downstream_rq_time', []),
    histogram('server.initialization_time_ms', [250]),
  ],
};

test('promtool check metrics finds nothing but the lint of Envoy naming', { timeout: 60_000 }, async () => {
  const formatter = new PrometheusFormatter(new TagExtractor(CONFIG), new HistogramBucketSettings(CONFIG.histogramBucketSettings));
  const exposition = [...formatter.render(SNAPSHOT, { usedOnly: false, filter: null })].join('');
  assert.match(exposition, /_bucket\{proxy_node="edge \\"1\\"\\\\a",proxy_cluster_name="a",le="1.5"\} 0\n/);
  const verdict = await checkMetrics(exposition);
  assert.deepEqual(verdict.problems, []);
  assert.ok(verdict.code === 0 || verdict.code === 3, `promtool exited ${verdict.code}`);
});

test('the same check fails on an exposition Prometheus cannot ingest', { timeout: 60_000 }, async () => {
  const verdict = await checkMetrics('# TYPE proxy_a counter\nproxy_a{} 1\n# TYPE proxy_a gauge\nproxy_a{} 2\n');
  assert.equal(verdict.code, 1);
  assert.equal(verdict.problems.length, 1);
});
