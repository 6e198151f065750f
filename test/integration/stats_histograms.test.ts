import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUCKET_COUNT } from '../../src/stats/histogram_buckets';
import { clusterRoute, httpConnectionManager, listener, startDataPlane, staticCluster, virtualHost, type DataPlane } from '../helpers/data_plane';
import { localCluster, httpListener } from '../helpers/config_fixtures';
import { request, startUpstream } from '../helpers/http_peers';
import { startProxy, waitFor } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };

/** Samples recorded into histogram `name`, summed over every writer's buckets. */
function samples(dp: DataPlane, name: string): number {
  const h = dp.stats.reader.histograms().find((x) => x.name === name);
  let n = 0;
  for (const w of h?.writers ?? []) for (let i = 0; i < BUCKET_COUNT; i++) n += w.buckets[i]!;
  return n;
}

test('a proxied request records the cluster, connection manager and listener histograms', TIMEOUT, async (t) => {
  const slow = await startUpstream('slow', (_req, res) => setTimeout(() => res.end('done'), 30));
  t.after(() => slow.close());
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'backend')])];
  const dp = await startDataPlane([listener('http', httpConnectionManager(routes))], [staticCluster('backend', [{ port: slow.port }])]);
  t.after(() => dp.close());
  const port = dp.port('http');
  const listenerPrefix = `listener.127.0.0.1_${port}`;
  for (const name of ['cluster.backend.upstream_rq_time', 'http.ingress_http.downstream_rq_time', `${listenerPrefix}.downstream_cx_length_ms`]) {
    assert.equal(samples(dp, name), 0, name);
  }

  // agent false: the client closes its connection after the response.
  const reply = await request(port, { path: '/' });
  assert.equal(reply.status, 200);
  assert.equal(samples(dp, 'cluster.backend.upstream_rq_time'), 1);
  assert.equal(samples(dp, 'cluster.backend.upstream_cx_connect_ms'), 1);
  assert.equal(samples(dp, 'http.ingress_http.downstream_rq_time'), 1);
  await waitFor('the downstream close', () => (samples(dp, `${listenerPrefix}.downstream_cx_length_ms`) === 1 ? true : undefined));
  assert.equal(samples(dp, 'http.ingress_http.downstream_cx_length_ms'), 1);
  // The upstream took 30 ms: the recorded time is at least that (the sum is of whole ms).
  const rqTime = dp.stats.reader.histograms().find((x) => x.name === 'cluster.backend.upstream_rq_time')!.writers[0]!;
  assert.ok(rqTime.sum >= 29, `upstream_rq_time sum ${rqTime.sum}`);

  // The pooled upstream connection records its length when it closes.
  assert.equal(samples(dp, 'cluster.backend.upstream_cx_length_ms'), 0);
  dp.clusters.close();
  await waitFor('the upstream close', () => (samples(dp, 'cluster.backend.upstream_cx_length_ms') === 1 ? true : undefined));
});

test('a proxy process lists every cluster counter at 0 before traffic, with its membership', TIMEOUT, async (t) => {
  const web = await startUpstream('web');
  t.after(() => web.close());
  // Two hosts of weights 4 and 8 that no request ever reaches.
  const unused = localCluster('unused', 1);
  const endpoint = unused.load_assignment.endpoints[0].lb_endpoints[0];
  unused.load_assignment.endpoints[0].lb_endpoints = [
    { ...endpoint, load_balancing_weight: 4 },
    { endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 2 } } }, load_balancing_weight: 8 },
  ];
  const routes = [{ match: { prefix: '/' }, route: { cluster: 'web' } }];
  const bootstrap = { static_resources: { listeners: [httpListener('http', 0, routes)], clusters: [localCluster('web', web.port), unused] } };
  const proxy = await startProxy(bootstrap, ['--concurrency', '2']);
  t.after(() => proxy.cleanup());
  const before = (await proxy.admin('/stats?filter=^cluster\\.unused\\.')).body;
  assert.match(before, /^cluster\.unused\.upstream_rq_total: 0$/m);
  assert.match(before, /^cluster\.unused\.upstream_rq_retry: 0$/m);
  assert.match(before, /^cluster\.unused\.upstream_cx_connect_fail: 0$/m);
  assert.match(before, /^cluster\.unused\.membership_total: 2$/m);
  assert.match(before, /^cluster\.unused\.membership_healthy: 2$/m);
  assert.match(before, /^cluster\.unused\.max_host_weight: 8$/m);

  const port = await proxy.listenerPort('http');
  assert.equal((await request(port, { path: '/' })).status, 200);
  assert.equal(await proxy.stat('cluster.web.upstream_rq_total'), 1);
  assert.equal(await proxy.stat('cluster.web.membership_total'), 1);
  assert.equal(await proxy.stat('cluster.unused.upstream_rq_total'), 0);
});
