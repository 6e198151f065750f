// Request and response header mutations at the route configuration, virtual host, route and
// weighted cluster levels, through the real binary over HTTP/1.1 and h2c alike: Envoy's order
// (most specific first, so the configuration's replacing values win, unless
// most_specific_header_mutations_wins), removal before addition, and formatted values.

import assert from 'node:assert/strict';
import type * as http from 'node:http';
import * as http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { h2Request, type Reply, request, startUpstream, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };

/** A cluster with no host: every request to it gets the router's 503. */
const DOWN = { name: 'down', connect_timeout: '1s', type: 'STATIC', load_assignment: { cluster_name: 'down', endpoints: [] } };

const set = (key: string, value: string) => ({ header: { key, value }, append: false });
const add = (key: string, value: string) => ({ header: { key, value } });

const ROUTES = [
  {
    match: { prefix: '/direct' },
    direct_response: { status: 200, body: { inline_string: 'direct' } },
    response_headers_to_add: [add('x-direct', 'yes')],
  },
  {
    match: { prefix: '/down' },
    route: { cluster: 'down' },
    response_headers_to_add: [add('x-resp', 'route'), set('content-type', 'text/x-replaced'), add('x-flags', '%RESPONSE_FLAGS%'), add('x-details', '%RESPONSE_CODE_DETAILS%')],
  },
  {
    match: { prefix: '/weighted' },
    route: { weighted_clusters: { clusters: [{ name: 'web', weight: 100, request_headers_to_add: [add('x-entry', 'weighted')], response_headers_to_add: [add('x-resp', 'entry')] }] } },
  },
  {
    match: { prefix: '/vars' },
    route: { cluster: 'tagged' },
    request_headers_to_add: [add('x-start', '%START_TIME(%s)%'), add('x-copy', 'tag %REQ(X-Tag)%'), add('x-host-known', '%UPSTREAM_REMOTE_ADDRESS%')],
    response_headers_to_add: [
      add('x-upstream', '%UPSTREAM_REMOTE_ADDRESS%'),
      add('x-version', '%UPSTREAM_METADATA(["com.example", "version"])%'),
      add('x-tls', '%DOWNSTREAM_TLS_VERSION%'),
      add('x-flags', '%RESPONSE_FLAGS%'),
      add('x-details', '%RESPONSE_CODE_DETAILS%'),
    ],
  },
  {
    match: { prefix: '/' },
    route: { cluster: 'web' },
    request_headers_to_add: [set('x-level', 'route'), add('x-peer', '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%')],
    request_headers_to_remove: ['x-drop'],
    response_headers_to_add: [add('x-resp', 'route')],
  },
];

/** A connection manager named `name` whose levels all mutate headers. */
function listener(name: string, mostSpecificWins: boolean): object {
  const built = httpListener(name, 0, ROUTES);
  const routeConfig = built.filter_chains[0].filters[0].typed_config.route_config;
  Object.assign(routeConfig, {
    request_headers_to_add: [set('x-level', 'configuration')],
    response_headers_to_add: [add('x-resp', 'configuration')],
    response_headers_to_remove: ['x-upstream-secret'],
    most_specific_header_mutations_wins: mostSpecificWins,
  });
  Object.assign(routeConfig.virtual_hosts[0], {
    request_headers_to_add: [set('x-level', 'virtual host'), add('x-protocol', 'over %PROTOCOL%')],
  });
  return built;
}

describe('header mutations on HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  const ports = { plain: 0, specific: 0 };
  const sessions: http2.ClientHttp2Session[] = [];

  before(async () => {
    upstream = await startUpstream('web', (req, res) => {
      res.setHeader('x-upstream-secret', 'hidden');
      res.end(JSON.stringify(req.headers));
    });
    // The upstream again, as a cluster whose host carries metadata.
    const tagged = localCluster('tagged', upstream.port);
    tagged.load_assignment.endpoints[0].lb_endpoints[0].metadata = { filter_metadata: { 'com.example': { version: 'v2' } } };
    const clusters = [localCluster('web', upstream.port), tagged, DOWN];
    proxy = await startProxy({ static_resources: { listeners: [listener('plain', false), listener('specific', true)], clusters } });
    ports.plain = await proxy.listenerPort('plain');
    ports.specific = await proxy.listenerPort('specific');
  });

  after(async () => {
    for (const session of sessions) session.destroy();
    await proxy?.cleanup();
    await upstream?.close();
  });

  type Send = (port: number, path: string, headers?: Record<string, string>) => Promise<Reply>;
  const http1: Send = (port, path, headers = {}) => request(port, { path, headers });
  const h2c: Send = (port, path, headers = {}) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    sessions.push(session);
    return h2Request(session, { path, headers });
  };
  const seen = (reply: Reply): http.IncomingHttpHeaders => JSON.parse(reply.body) as http.IncomingHttpHeaders;

  for (const [protocol, send, wire] of [['HTTP/1.1', http1, 'HTTP/1.1'], ['h2c', h2c, 'HTTP/2']] as const) {
    test(`${protocol}: each level in Envoy's order, values formatted, removals first`, async () => {
      const plain = await send(ports.plain, '/a', { 'x-drop': 'gone', 'x-level': 'client' });
      const upstreamSaw = seen(plain);
      // Route, then virtual host, then configuration: the last replacing value is the configuration's.
      assert.equal(upstreamSaw['x-level'], 'configuration');
      assert.equal(upstreamSaw['x-drop'], undefined);
      assert.equal(upstreamSaw['x-peer'], '127.0.0.1');
      assert.equal(upstreamSaw['x-protocol'], `over ${wire}`);
      assert.equal(plain.headers['x-resp'], 'route, configuration');
      assert.equal(plain.headers['x-upstream-secret'], undefined);

      const specific = await send(ports.specific, '/a');
      assert.equal(seen(specific)['x-level'], 'route');
      assert.equal(specific.headers['x-resp'], 'configuration, route');

      // A weighted cluster's own mutations go before its route's.
      const weighted = await send(ports.plain, '/weighted');
      assert.equal(seen(weighted)['x-entry'], 'weighted');
      assert.equal(seen(weighted)['x-level'], 'configuration');
      assert.equal(weighted.headers['x-resp'], 'entry, configuration');

      // A direct response gets the response mutations too.
      const direct = await send(ports.plain, '/direct');
      assert.equal(direct.body, 'direct');
      assert.equal(direct.headers['x-direct'], 'yes');
      assert.equal(direct.headers['x-resp'], 'configuration');

      // So does a reply of the router's own once the route is chosen (Envoy's modify_headers),
      // after its content-type, before the manager's date and server.
      const down = await send(ports.plain, '/down');
      assert.equal(down.status, 503);
      assert.equal(down.body, 'no healthy upstream');
      assert.equal(down.headers['x-resp'], 'route, configuration');
      assert.equal(down.headers['content-type'], 'text/x-replaced');
      // The stream's record, kept for these values though no access log asks.
      assert.deepEqual([down.headers['x-flags'], down.headers['x-details']], ['UH', 'no_healthy_upstream']);
      assert.equal(down.headers.server, 'proxy');
    });

    test(`${protocol}: values from the stream's start, the request, the upstream host and its metadata`, async () => {
      const before = Math.floor(Date.now() / 1000);
      const reply = await send(ports.plain, '/vars', { 'x-tag': 'seven' });
      const upstreamSaw = seen(reply);
      const start = Number(upstreamSaw['x-start']);
      assert.ok(start >= before && start <= Math.ceil(Date.now() / 1000), String(start));
      assert.equal(upstreamSaw['x-copy'], 'tag seven');
      // No host is chosen when the request's values are made: empty, so not added (as in Envoy).
      assert.equal(upstreamSaw['x-host-known'], undefined);
      assert.equal(reply.headers['x-upstream'], `127.0.0.1:${upstream.port}`);
      assert.equal(reply.headers['x-version'], 'v2');
      assert.equal(reply.headers['x-tls'], undefined);
      assert.deepEqual([reply.headers['x-flags'], reply.headers['x-details']], ['-', 'via_upstream']);
    });
  }
});
