import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createHeapStatsStore } from '../../src/stats/store';
import {
  CLUSTER_COUNTERS,
  CLUSTER_GAUGES,
  CLUSTER_HISTOGRAMS,
  ClusterStats,
  declareClusterStatNames,
} from '../../src/upstream/worker/cluster_stats';
import { staticCluster } from '../helpers/data_plane';

test('declareClusterStatNames names every cluster stat at 0 without making a worker handle', () => {
  const store = createHeapStatsStore();
  declareClusterStatNames(store, staticCluster('web:8080', [{ port: 1 }]));
  const snapshot = store.snapshot();
  for (const name of CLUSTER_COUNTERS) assert.equal(snapshot.get(`cluster.web_8080.${name}`), 0, name);
  for (const [name] of CLUSTER_GAUGES) assert.ok(snapshot.has(`cluster.web_8080.${name}`), name);
  const histograms = store.reader.histograms().map((h) => h.name);
  for (const name of CLUSTER_HISTOGRAMS) assert.ok(histograms.includes(`cluster.web_8080.${name}`), name);
  assert.ok(CLUSTER_COUNTERS.length + CLUSTER_GAUGES.length + CLUSTER_HISTOGRAMS.length > 80);
});

test('a worker handle set shares the names the supervisor declared', () => {
  const store = createHeapStatsStore();
  declareClusterStatNames(store, staticCluster('api', [{ port: 1 }]));
  const stats = new ClusterStats(store.scope('cluster.api'));
  stats.counters.upstream_rq_total.inc();
  stats.chargeResponseCode(503, false);
  const s = store.snapshot();
  assert.equal(s.get('cluster.api.upstream_rq_total'), 1);
  assert.equal(s.get('cluster.api.upstream_rq_completed'), 1);
  assert.equal(s.get('cluster.api.upstream_rq_5xx'), 1);
  assert.equal(s.get('cluster.api.upstream_rq_503'), 1);
});

test('responses are charged again as internal or external, and as a canary\'s, as Envoy\'s code stats are', () => {
  const store = createHeapStatsStore();
  declareClusterStatNames(store, staticCluster('api', [{ port: 1 }]));
  const stats = new ClusterStats(store.scope('cluster.api'));
  stats.chargeResponseCode(200, false);
  stats.chargeResponseCode(200, false, true);
  stats.chargeResponseCode(429, true);
  stats.recordRequestTime(5, false, true);
  stats.recordRequestTime(7, true, false);
  const s = store.snapshot();
  assert.equal(s.get('cluster.api.upstream_rq_200'), 2);
  assert.equal(s.get('cluster.api.upstream_rq_completed'), 3);
  assert.equal(s.get('cluster.api.external.upstream_rq_200'), 2);
  assert.equal(s.get('cluster.api.external.upstream_rq_2xx'), 2);
  assert.equal(s.get('cluster.api.external.upstream_rq_completed'), 2);
  assert.equal(s.get('cluster.api.internal.upstream_rq_429'), 1);
  assert.equal(s.get('cluster.api.internal.upstream_rq_4xx'), 1);
  assert.equal(s.get('cluster.api.internal.upstream_rq_200'), undefined);
  assert.equal(s.get('cluster.api.canary.upstream_rq_200'), 1);
  assert.equal(s.get('cluster.api.canary.upstream_rq_completed'), 1);
  const histograms = store.reader.histograms().map((h) => h.name);
  for (const name of ['upstream_rq_time', 'external.upstream_rq_time', 'internal.upstream_rq_time', 'canary.upstream_rq_time']) {
    assert.ok(histograms.includes(`cluster.api.${name}`), name);
  }
});
