// Virtual clusters through the real binary over HTTP/1.1 and h2c: requests matching two virtual
// clusters and one matching none are counted under `vhost.<virtual host>.vcluster.<name>.` (the
// last under the catch-all, `other`), the router's own timeout reply and a retry included, and
// /stats and /stats?format=prometheus show the counters and the upstream_rq_time histogram with
// Envoy's names and tags.

import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { h2Request, type Reply, request, startUpstream, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };

const ROUTES = [
  { match: { prefix: '/users/slow' }, route: { cluster: 'web', timeout: '0.2s' } },
  { match: { prefix: '/rides' }, route: { cluster: 'web', retry_policy: { retry_on: '5xx', num_retries: 1 } } },
  { match: { prefix: '/' }, route: { cluster: 'web' } },
];

const VIRTUAL_CLUSTERS = [
  { name: 'users', headers: [{ name: ':path', prefix_match: '/users' }] },
  {
    name: 'ride_requests',
    headers: [
      { name: ':method', exact_match: 'POST' },
      { name: ':path', safe_regex_match: { google_re2: {}, regex: '/rides/\\d+' } },
    ],
  },
];

/** One virtual host per protocol, so that each test reads counts of its own requests only. */
function virtualHost(name: string): object {
  return { name, domains: [`${name}.example`], routes: ROUTES, virtual_clusters: VIRTUAL_CLUSTERS };
}

describe('virtual cluster statistics on HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  let port: number;
  let session: http2.ClientHttp2Session;

  before(async () => {
    // /users/slow is never answered; the first try of each /rides request is a 503.
    const tries = new Map<string, number>();
    upstream = await startUpstream('web', (req, res) => {
      if (req.url === '/users/slow') return;
      const key = `${req.headers.host} ${req.url}`;
      const attempt = (tries.get(key) ?? 0) + 1;
      tries.set(key, attempt);
      if (req.url!.startsWith('/rides')) res.statusCode = attempt === 1 ? 503 : 201;
      else if (req.url === '/missing') res.statusCode = 404;
      res.end('ok');
    });
    const listener = httpListener('vc', 0, []);
    listener.filter_chains[0].filters[0].typed_config.route_config.virtual_hosts = [
      virtualHost('h1'),
      virtualHost('h2'),
      { name: 'plain', domains: ['*'], routes: ROUTES },
    ];
    proxy = await startProxy({ stats_flush_interval: '0.1s', static_resources: { listeners: [listener], clusters: [localCluster('web', upstream.port)] } });
    port = await proxy.listenerPort('vc');
    session = http2.connect(`http://127.0.0.1:${port}`);
  });

  after(async () => {
    session?.destroy();
    await proxy?.cleanup();
    await upstream?.close();
  });

  test("every virtual cluster, and each virtual host's catch-all, is listed at 0 before traffic", async () => {
    const stats = (await proxy.admin('/stats?filter=^vhost\\.')).body;
    for (const vcluster of ['h1.vcluster.users', 'h1.vcluster.ride_requests', 'h1.vcluster.other', 'h2.vcluster.other', 'plain.vcluster.other']) {
      for (const counter of ['upstream_rq_total', 'upstream_rq_timeout', 'upstream_rq_retry', 'upstream_rq_retry_success', 'upstream_rq_retry_overflow', 'upstream_rq_retry_limit_exceeded']) {
        assert.match(stats, new RegExp(`^vhost\\.${vcluster.replace(/\./g, '\\.')}\\.${counter}: 0$`, 'm'), `${vcluster}.${counter}`);
      }
    }
  });

  type Send = (method: string, path: string) => Promise<Reply>;
  const protocols: readonly [string, string, () => Send][] = [
    ['HTTP/1.1', 'h1', () => (method, path) => request(port, { method, path, headers: { host: 'h1.example' } })],
    ['h2c', 'h2', () => (method, path) => h2Request(session, { method, path, headers: { ':authority': 'h2.example' } })],
  ];
  for (const [protocol, vhost, client] of protocols) {
    test(`${protocol}: requests count under the virtual cluster they match, or under other`, async () => {
      const send = client();
      assert.equal((await send('GET', '/users/1')).status, 200);
      assert.equal((await send('PUT', '/users/2')).status, 200);
      assert.deepEqual([(await send('GET', '/users/slow')).status], [504]);
      // Retried once, then a 201: one request, two tries.
      assert.equal((await send('POST', '/rides/7')).status, 201);
      // A GET of a ride matches no virtual cluster, nor does /missing.
      assert.equal((await send('GET', '/rides/8')).status, 201);
      assert.equal((await send('GET', '/missing')).status, 404);
      // The virtual host without virtual clusters counts nothing.
      assert.equal((await request(port, { path: '/users/3', headers: { host: 'elsewhere.example' } })).status, 200);

      const prefix = `vhost.${vhost}.vcluster`;
      const expected: Record<string, number> = {
        [`${prefix}.users.upstream_rq_total`]: 3,
        [`${prefix}.users.upstream_rq_completed`]: 3,
        [`${prefix}.users.upstream_rq_2xx`]: 2,
        [`${prefix}.users.upstream_rq_200`]: 2,
        // The router's own 504 for the route timeout.
        [`${prefix}.users.upstream_rq_5xx`]: 1,
        [`${prefix}.users.upstream_rq_504`]: 1,
        [`${prefix}.users.upstream_rq_timeout`]: 1,
        [`${prefix}.users.upstream_rq_retry`]: 0,
        [`${prefix}.ride_requests.upstream_rq_total`]: 2,
        [`${prefix}.ride_requests.upstream_rq_completed`]: 1,
        [`${prefix}.ride_requests.upstream_rq_2xx`]: 1,
        [`${prefix}.ride_requests.upstream_rq_201`]: 1,
        [`${prefix}.ride_requests.upstream_rq_retry`]: 1,
        [`${prefix}.ride_requests.upstream_rq_retry_success`]: 1,
        [`${prefix}.ride_requests.upstream_rq_timeout`]: 0,
        [`${prefix}.other.upstream_rq_total`]: 3,
        [`${prefix}.other.upstream_rq_completed`]: 2,
        [`${prefix}.other.upstream_rq_201`]: 1,
        [`${prefix}.other.upstream_rq_404`]: 1,
        [`${prefix}.other.upstream_rq_4xx`]: 1,
        [`${prefix}.other.upstream_rq_retry`]: 1,
        [`${prefix}.other.upstream_rq_retry_success`]: 1,
        'vhost.plain.vcluster.other.upstream_rq_total': 0,
      };
      const text = (await proxy.admin(`/stats?filter=^vhost\\.(${vhost}|plain)\\.`)).body;
      const listed = new Map(
        text
          .split('\n')
          .filter((line) => /: \d+$/.test(line))
          .map((line) => [line.slice(0, line.lastIndexOf(':')), Number(line.slice(line.lastIndexOf(' ') + 1))] as const),
      );
      for (const [name, value] of Object.entries(expected)) assert.equal(listed.get(name), value, name);
      assert.equal(listed.has(`${prefix}.ride_requests.upstream_rq_503`), false, 'a retried response is no response code of the virtual cluster');
      assert.equal(listed.has('vhost.plain.vcluster.other.upstream_rq_completed'), false);
      const tags = `proxy_virtual_cluster="users",proxy_virtual_host="${vhost}"`;
      // The two answered users requests have a response time (the timed-out one has none), which
      // the histograms show once flushed.
      const timeCount = `proxy_vhost_vcluster_upstream_rq_time_count{${tags}} 2`;
      const prometheus = await waitFor('the histograms flushed', async () => {
        const lines = (await proxy.admin('/stats?format=prometheus')).body.split('\n');
        return lines.includes(timeCount) ? lines : undefined;
      });
      assert.ok(prometheus.includes(`# TYPE proxy_vhost_vcluster_upstream_rq_time histogram`));
      assert.ok(prometheus.includes(`proxy_vhost_vcluster_upstream_rq{proxy_response_code="200",${tags}} 2`));
      assert.ok(prometheus.includes(`proxy_vhost_vcluster_upstream_rq_xx{proxy_response_code_class="5",${tags}} 1`));
      assert.ok(prometheus.includes(`proxy_vhost_vcluster_upstream_rq_timeout{${tags}} 1`));
      assert.ok(prometheus.includes(`proxy_vhost_vcluster_upstream_rq_total{proxy_virtual_cluster="other",proxy_virtual_host="plain"} 0`));
      const histogram = (await proxy.admin(`/stats?filter=^vhost\\.${vhost}\\.vcluster\\.users\\.upstream_rq_time$`)).body.trim();
      assert.match(histogram, new RegExp(`^vhost\\.${vhost}\\.vcluster\\.users\\.upstream_rq_time: P0\\([^)]*\\) P25`));
    });
  }
});
