// proxy.filters.http.cors through the real binary, over HTTP/1.1 and h2c alike: preflights
// answered here from the route's policy or its virtual host's, simple requests given
// Access-Control-Allow-Origin, origins not allowed left alone, filter_enabled and shadow_enabled,
// and the cors.origin_valid/origin_invalid counters in /stats and /stats/prometheus.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { listenerClients, type Reply, startUpstream, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };
const CORS_FILTER = { name: 'proxy.filters.http.cors', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors' } };
const ROUTER = { name: 'proxy.filters.http.router' };
const never = { default_value: { numerator: 0, denominator: 'HUNDRED' } };
const always = { default_value: { numerator: 100, denominator: 'HUNDRED' } };

const ROUTES = [
  // Its own origins and methods; the rest from the virtual host's policy.
  { match: { prefix: '/own' }, route: { cluster: 'web', cors: { allow_origin_string_match: [{ prefix: 'https://own.' }], allow_methods: 'PUT' } } },
  { match: { prefix: '/off' }, route: { cluster: 'web', cors: { allow_origin_string_match: [{ exact: 'https://a.example' }], filter_enabled: never } } },
  { match: { prefix: '/shadow' }, route: { cluster: 'web', cors: { allow_origin_string_match: [{ exact: 'https://a.example' }], filter_enabled: never, shadow_enabled: always } } },
  { match: { prefix: '/' }, route: { cluster: 'web' } },
];

const VIRTUAL_HOST_CORS = {
  allow_origin_string_match: [{ exact: 'https://a.example' }, { suffix: '.b.example' }],
  allow_methods: 'GET, POST',
  allow_headers: 'x-custom',
  expose_headers: 'x-exposed',
  max_age: '600',
  allow_credentials: true,
};

describe('CORS on HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  const ports: Record<string, number> = {};
  const clients = listenerClients(ports);
  let upstreamRequests = 0;

  before(async () => {
    upstream = await startUpstream('web', (_req, res) => {
      upstreamRequests++;
      res.end('from upstream');
    });
    const listener = httpListener('cors', 0, ROUTES, { http_filters: [CORS_FILTER, ROUTER] });
    listener.filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].cors = VIRTUAL_HOST_CORS;
    proxy = await startProxy({ static_resources: { listeners: [listener], clusters: [localCluster('web', upstream.port)] } });
    ports.cors = await proxy.listenerPort('cors');
  });

  after(async () => {
    clients.close();
    await proxy?.cleanup();
    await upstream?.close();
  });

  const corsHeaders = (reply: Reply): Record<string, unknown> =>
    Object.fromEntries(Object.entries(reply.headers).filter(([name]) => name.startsWith('access-control-')));

  for (const [protocol, send] of clients.protocols) {
    const preflight = (path: string, origin: string) =>
      send('cors', { method: 'OPTIONS', path, headers: { origin, 'access-control-request-method': 'POST' } });

    test(`${protocol}: a preflight from an allowed origin is answered here with the virtual host's policy`, async () => {
      const before = upstreamRequests;
      const reply = await preflight('/', 'https://a.example');
      assert.equal(reply.status, 200);
      assert.equal(reply.body, '');
      assert.deepEqual(corsHeaders(reply), {
        'access-control-allow-origin': 'https://a.example',
        'access-control-allow-credentials': 'true',
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers': 'x-custom',
        'access-control-max-age': '600',
        'access-control-expose-headers': 'x-exposed',
      });
      assert.equal(upstreamRequests, before);
      // Suffix matchers count too.
      assert.equal((await preflight('/', 'https://c.b.example')).headers['access-control-allow-origin'], 'https://c.b.example');
    });

    test(`${protocol}: a simple request goes upstream and its response names the origin`, async () => {
      const reply = await send('cors', { path: '/', headers: { origin: 'https://a.example' } });
      assert.equal(reply.body, 'from upstream');
      assert.deepEqual(corsHeaders(reply), {
        'access-control-allow-origin': 'https://a.example',
        'access-control-allow-credentials': 'true',
        'access-control-expose-headers': 'x-exposed',
      });
      // An OPTIONS that asks for no method is no preflight.
      const options = await send('cors', { method: 'OPTIONS', path: '/', headers: { origin: 'https://a.example' } });
      assert.equal(options.body, 'from upstream');
    });

    test(`${protocol}: the route's own policy first, the virtual host's for what it leaves out`, async () => {
      const reply = await preflight('/own', 'https://own.example');
      assert.equal(reply.status, 200);
      assert.equal(reply.headers['access-control-allow-methods'], 'PUT');
      assert.equal(reply.headers['access-control-allow-headers'], 'x-custom');
      assert.equal(reply.headers['access-control-allow-credentials'], 'true');
      // The route's origins replace the virtual host's.
      const other = await preflight('/own', 'https://a.example');
      assert.equal(other.body, 'from upstream');
      assert.deepEqual(corsHeaders(other), {});
    });

    test(`${protocol}: origins not allowed, no origin, filter_enabled off and shadow mode change nothing`, async () => {
      for (const reply of [
        await preflight('/', 'https://evil.example'),
        await send('cors', { path: '/', headers: { origin: 'https://evil.example' } }),
        await send('cors', { path: '/' }),
        await preflight('/off', 'https://a.example'),
        await preflight('/shadow', 'https://a.example'),
      ]) {
        assert.equal(reply.body, 'from upstream');
        assert.deepEqual(corsHeaders(reply), {});
      }
    });
  }

  test('origins are counted valid or invalid; shadow mode counts, filter_enabled off does not', async () => {
    // Per protocol: valid 2 preflights + 2 requests + 1 (/own) + 1 (shadow); invalid 1 (/own with another origin) + 2 (evil).
    assert.equal(await proxy.stat('http.ingress_http.cors.origin_valid'), 2 * 6);
    assert.equal(await proxy.stat('http.ingress_http.cors.origin_invalid'), 2 * 3);
    const prometheus = (await proxy.admin('/stats/prometheus')).body;
    assert.match(prometheus, /^proxy_http_cors_origin_valid\{proxy_http_conn_manager_prefix="ingress_http"\} 12$/m);
    assert.match(prometheus, /^proxy_http_cors_origin_invalid\{proxy_http_conn_manager_prefix="ingress_http"\} 6$/m);
  });
});
