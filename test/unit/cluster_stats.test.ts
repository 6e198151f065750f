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
  stats.chargeResponseCode(503);
  const s = store.snapshot();
  assert.equal(s.get('cluster.api.upstream_rq_total'), 1);
  assert.equal(s.get('cluster.api.upstream_rq_completed'), 1);
  assert.equal(s.get('cluster.api.upstream_rq_5xx'), 1);
  assert.equal(s.get('cluster.api.upstream_rq_503'), 1);
});
