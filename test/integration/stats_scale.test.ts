import assert from 'node:assert/strict';
import { test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { request, startUpstream } from '../helpers/http_peers';
import { startProxy } from '../helpers/proxy_process';

const CLUSTERS = 10_000;
const SERVED = 'c4321';

/** Cluster `name` of three hosts: the given ports on 127.0.0.1, or addresses nothing connects to. */
function threeHostCluster(name: string, index: number, ports: readonly number[] | null): ReturnType<typeof localCluster> {
  const cluster = localCluster(name, 1);
  const hosts = [0, 1, 2].map((h) =>
    ports === null
      ? { address: `10.${index >> 8}.${index & 255}.${h + 1}`, port_value: 80 }
      : { address: '127.0.0.1', port_value: ports[h] },
  );
  cluster.load_assignment.endpoints[0].lb_endpoints = hosts.map((socket_address) => ({ endpoint: { address: { socket_address } } }));
  return cluster;
}

test(`${CLUSTERS} static clusters of three hosts: every cluster's counters listed, the served one counting`, { timeout: 90_000 }, async (t) => {
  const upstreams = await Promise.all([0, 1, 2].map((i) => startUpstream(`u${i}`)));
  t.after(() => Promise.all(upstreams.map((u) => u.close())));
  const ports = upstreams.map((u) => u.port);
  const clusters = Array.from({ length: CLUSTERS }, (_, i) => threeHostCluster(`c${i}`, i, `c${i}` === SERVED ? ports : null));
  const routes = [{ match: { prefix: '/' }, route: { cluster: SERVED } }];
  const bootstrap = { static_resources: { listeners: [httpListener('http', 0, routes)], clusters } };

  const started = performance.now();
  // startProxy returns once /ready answers 200: the server is LIVE.
  const proxy = await startProxy(bootstrap, ['--concurrency', '2'], 60_000);
  t.after(() => proxy.cleanup());
  t.diagnostic(`startup to LIVE with ${CLUSTERS} clusters: ${Math.round(performance.now() - started)} ms`);

  const port = await proxy.listenerPort('http');
  assert.equal((await request(port, { path: '/' })).status, 200);
  const stats = (await proxy.admin('/stats?filter=^cluster\\.c(9999|4321)\\.upstream_rq_total$')).body;
  assert.match(stats, /^cluster\.c9999\.upstream_rq_total: 0$/m);
  assert.match(stats, new RegExp(`^cluster\\.${SERVED}\\.upstream_rq_total: 1$`, 'm'));
  const all = (await proxy.admin('/stats?filter=^cluster\\.c9999\\.')).body;
  assert.match(all, /^cluster\.c9999\.membership_total: 3$/m);
});
