// The aggregate cluster with the real proxy (--concurrency 2): an aggregate over two STATIC
// clusters of real upstreams, HTTP and tcp_proxy in front of it. Traffic goes to the primary;
// when active health checks fail the primary's host it fails over to the secondary, and back
// when it recovers. Each wait is a poll of the admin API or of the traffic, with a deadline.

import assert from 'node:assert/strict';
import * as net from 'node:net';
import { describe, test } from 'node:test';
import { httpListener, tcpProxyListener } from '../helpers/config_fixtures';
import { startUpstream, type Upstream } from '../helpers/http_peers';
import { request, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 90_000 };
const AGGREGATE_TYPE = 'type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig';

/** A STATIC cluster of one upstream, health checked at /healthz every 100ms. */
function checkedCluster(name: string, port: number): Record<string, unknown> {
  return {
    name,
    type: 'STATIC',
    connect_timeout: '1s',
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] },
    health_checks: [{ timeout: '1s', interval: '0.1s', no_traffic_interval: '0.1s', unhealthy_threshold: 1, healthy_threshold: 1, http_health_check: { path: '/healthz' } }],
  };
}

/** One HTTP/1.1 request over a fresh connection to the tcp_proxy listener: the upstream's body. */
function viaTcpProxy(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    socket.on('connect', () => socket.write('GET / HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n'));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString();
      resolve(text.slice(text.indexOf('\r\n\r\n') + 4));
    });
  });
}

describe('aggregate cluster', TIMEOUT, () => {
  test('fails over from the primary to the secondary and back, over HTTP and tcp_proxy; per-child stats on the children', async () => {
    const primaryGood = { value: true };
    const upstreams: Upstream[] = [];
    for (const name of ['primary', 'secondary']) {
      upstreams.push(
        await startUpstream(name, (req, res) => {
          if (req.url === '/healthz') res.writeHead(name === 'secondary' || primaryGood.value ? 200 : 503).end();
          else res.end(name);
        }),
      );
    }
    let proxy: RunningProxy | undefined;
    try {
      proxy = await startProxy(
        {
          static_resources: {
            listeners: [
              httpListener('http_in', 0, [{ match: { prefix: '/' }, route: { cluster: 'agg' } }]),
              tcpProxyListener('tcp_in', 0, 'agg'),
            ],
            clusters: [
              {
                name: 'agg',
                connect_timeout: '1s',
                lb_policy: 'CLUSTER_PROVIDED',
                cluster_type: { name: 'envoy.clusters.aggregate', typed_config: { '@type': AGGREGATE_TYPE, clusters: ['primary', 'secondary'] } },
              },
              checkedCluster('primary', upstreams[0]!.port),
              checkedCluster('secondary', upstreams[1]!.port),
            ],
          },
        },
        ['--concurrency', '2'],
      );
      const running = proxy;
      const http = await proxy.listenerPort('http_in');
      const tcp = await proxy.listenerPort('tcp_in');
      const viaHttp = async () => (await request(`http://127.0.0.1:${http}/`, { headers: { connection: 'close' } })).body;
      // Enough fresh connections that both workers serve some (the kernel spreads them).
      const answers = async (n: number) => {
        const seen = new Set<string>();
        for (let i = 0; i < n; i++) {
          seen.add(`http ${await viaHttp()}`);
          seen.add(`tcp ${await viaTcpProxy(tcp)}`);
        }
        return [...seen].sort();
      };
      const settlesOn = (child: string) =>
        waitFor(`traffic on ${child}`, async () => ((await answers(4)).join() === `http ${child},tcp ${child}` ? true : undefined), 20_000);

      // /clusters lists the aggregate with no hosts of its own.
      const clusters = (await proxy.admin('/clusters')).body.split('\n');
      assert.ok(clusters.some((l) => l.startsWith('agg::')), 'the aggregate is listed');
      assert.ok(!clusters.some((l) => /^agg::\d/.test(l)), 'with no hosts');

      assert.deepEqual(await answers(10), ['http primary', 'tcp primary']);
      primaryGood.value = false;
      await waitFor('primary failed', async () => ((await running.admin('/clusters')).body.includes(`primary::127.0.0.1:${upstreams[0]!.port}::health_flags::/failed_active_hc`) ? true : undefined), 20_000);
      await settlesOn('secondary');
      assert.deepEqual(await answers(10), ['http secondary', 'tcp secondary']);
      primaryGood.value = true;
      await settlesOn('primary');
      assert.deepEqual(await answers(10), ['http primary', 'tcp primary']);

      // Connections and requests count on the child that served them; responses on the route's cluster.
      for (const child of ['primary', 'secondary']) {
        assert.ok((await proxy.stat(`cluster.${child}.upstream_cx_total`))! > 0, `${child} connections`);
        assert.ok((await proxy.stat(`cluster.${child}.upstream_rq_total`))! > 0, `${child} requests`);
      }
      assert.equal(await proxy.stat('cluster.agg.upstream_cx_total'), 0);
      assert.ok((await proxy.stat('cluster.agg.upstream_rq_2xx'))! > 0);
    } finally {
      await proxy?.cleanup();
      await Promise.all(upstreams.map((u) => u.close()));
    }
  });
});
