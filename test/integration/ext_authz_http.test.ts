// proxy.filters.http.ext_authz with an HTTP authorization service, through the real binary over
// HTTP/1.1 and h2c against a server the test runs: an allowed request goes on with the server's
// allowed headers set (and appended); a denied one gets the server's status, body and allowed
// headers; a 5xx, a server that is down, or no answer, is an error (status_on_error, or on with
// failure_mode_allow); with_request_body sends the body (413 past max_request_bytes, or part of
// it); a route's ExtAuthzPerRoute turns the check off; the counters in /stats and Prometheus;
// --mode validate refusing bad configs by field path.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Json } from '../helpers/config_fixtures';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { servableV3 } from '../helpers/cli_bootstraps';
import { mapLimited, runToExit } from '../helpers/cli_runs';
import { closeServer, listen, listenerClients, startUpstream, type Upstream } from '../helpers/http_peers';
import { refusedPort } from '../helpers/refused_port';
import { makeTempDir, type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
const EXT_AUTHZ_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz';
const PER_ROUTE_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute';

interface AuthzSeen {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** The authorization server: its answer is the request's Bearer token's. */
async function authzServer(): Promise<{ port: number; seen: AuthzSeen[]; close(): Promise<void> }> {
  const seen: AuthzSeen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      switch (req.headers.authorization) {
        case 'Bearer allow':
          res.writeHead(200, { 'x-authz-user': 'alice', 'x-appended': 'more', 'x-not-allowed': 'no' });
          res.end();
          break;
        case 'Bearer reroute':
          res.writeHead(200, { 'x-route': 'b' });
          res.end();
          break;
        case 'Bearer slow':
          // Never answers: the timeout decides.
          break;
        case 'Bearer crash':
          res.writeHead(500);
          res.end('oops');
          break;
        default:
          res.writeHead(401, { 'www-authenticate': 'Bearer realm="test"', 'x-deny-reason': 'bad token', 'x-hidden': 'no', 'content-type': 'text/x-denied' });
          // Bytes no UTF-8 sequence takes (ff fe) go downstream as they are, as Envoy passes them.
          res.end(Buffer.concat([Buffer.from('denied!'), Buffer.from([0xff, 0xfe])]));
      }
    });
  });
  const port = await listen(server);
  return { port, seen, close: () => closeServer(server) };
}

const authzFilter = (fields: Json): Json => ({ name: 'envoy.filters.http.ext_authz', typed_config: { '@type': EXT_AUTHZ_TYPE, ...fields } });

function httpService(cluster: string, extra: Json = {}): Json {
  return {
    server_uri: { uri: 'http://authz', cluster, timeout: '0.5s' },
    path_prefix: '/check',
    authorization_request: { allowed_headers: { patterns: [{ exact: 'x-user-hint' }, { exact: 'x-proxy-auth-partial-body' }] }, headers_to_add: [{ key: 'x-authz-from', value: 'proxy' }] },
    authorization_response: {
      allowed_upstream_headers: { patterns: [{ exact: 'x-authz-user' }, { exact: 'x-route' }] },
      allowed_upstream_headers_to_append: { patterns: [{ exact: 'x-appended' }] },
      allowed_client_headers: { patterns: [{ exact: 'x-deny-reason' }, { exact: 'content-type' }] },
    },
    ...extra,
  };
}

function listener(name: string, filter: Json): Json {
  const routes = [
    { match: { prefix: '/', headers: [{ name: 'x-route', exact_match: 'b' }] }, route: { cluster: 'other' } },
    { match: { prefix: '/public' }, route: { cluster: 'web' }, typed_per_filter_config: { 'envoy.filters.http.ext_authz': { '@type': PER_ROUTE_TYPE, disabled: true } } },
    { match: { prefix: '/' }, route: { cluster: 'web' } },
  ];
  return httpListener(name, 0, routes, { stat_prefix: name, http_filters: [authzFilter(filter), { name: 'envoy.filters.http.router' }] });
}

describe('ext_authz with an HTTP service, over HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstream: Upstream;
  let other: Upstream;
  let authz: Awaited<ReturnType<typeof authzServer>>;
  let proxy: RunningProxy;
  const ports: Record<string, number> = {};
  const clients = listenerClients(ports);

  before(async () => {
    upstream = await startUpstream('web');
    other = await startUpstream('other');
    authz = await authzServer();
    // The service is down: nothing listens on its port.
    const downPort = await refusedPort();
    const listeners = [
      listener('main', { http_service: httpService('authz') }),
      listener('allow', { http_service: httpService('authz_down'), failure_mode_allow: true }),
      listener('closed', { http_service: httpService('authz_down'), status_on_error: { code: 'ServiceUnavailable' } }),
      listener('body', { http_service: httpService('authz'), with_request_body: { max_request_bytes: 10 } }),
      listener('partial', { http_service: httpService('authz'), with_request_body: { max_request_bytes: 4, allow_partial_message: true } }),
      listener('reroute', { http_service: httpService('authz'), clear_route_cache: true }),
      listener('skip', { http_service: httpService('authz'), filter_enabled: { default_value: { numerator: 0 } } }),
      listener('deny', { http_service: httpService('authz'), filter_enabled: { default_value: { numerator: 0 } }, deny_at_disable: { default_value: true, runtime_key: 'ext_authz.deny' } }),
    ];
    const clusters = [localCluster('web', upstream.port), localCluster('other', other.port), localCluster('authz', authz.port), localCluster('authz_down', downPort)];
    proxy = await startProxy({ static_resources: { listeners, clusters } });
    for (const name of ['main', 'allow', 'closed', 'body', 'partial', 'reroute', 'skip', 'deny']) ports[name] = await proxy.listenerPort(name);
  });

  after(async () => {
    clients.close();
    await proxy?.cleanup();
    await upstream?.close();
    await other?.close();
    await authz?.close();
  });

  const upstreamSaw = (body: string): Json => JSON.parse(body);

  for (const [protocol, send] of clients.protocols) {
    test(`${protocol}: an allowed request goes on with the server's allowed headers; the server saw what Envoy sends`, async () => {
      const before = authz.seen.length;
      const reply = await send('main', { path: '/api?x=1', headers: { authorization: 'Bearer allow', 'x-user-hint': 'h', 'x-secret': 's', 'x-appended': 'orig' } });
      assert.equal(reply.status, 200);
      const seen = upstreamSaw(reply.body);
      assert.equal(seen.headers['x-authz-user'], 'alice');
      assert.equal(seen.headers['x-appended'], 'orig, more');
      assert.equal(seen.headers['x-not-allowed'], undefined);
      assert.equal(authz.seen.length, before + 1);
      const check = authz.seen[before]!;
      assert.equal(check.method, 'GET');
      assert.equal(check.url, '/check/api?x=1');
      assert.equal(check.headers.host, `127.0.0.1:${ports.main}`);
      assert.equal(check.headers.authorization, 'Bearer allow');
      assert.equal(check.headers['x-user-hint'], 'h');
      assert.equal(check.headers['x-authz-from'], 'proxy');
      assert.equal(check.headers['x-secret'], undefined);
      assert.equal(check.headers['content-length'], '0');
    });

    test(`${protocol}: a denied request gets the server's status, body and allowed headers, and never reaches the upstream`, async () => {
      const seen = upstream.seen.length;
      const reply = await send('main', { path: '/api', headers: { authorization: 'Bearer nope' } });
      assert.equal(reply.status, 401);
      assert.equal(reply.body, 'denied!\ufffd\ufffd');
      assert.equal(reply.headers['content-length'], '9', 'the two bytes, not two U+FFFD of three');
      assert.equal(reply.headers['x-deny-reason'], 'bad token');
      assert.equal(reply.headers['www-authenticate'], 'Bearer realm="test"');
      assert.equal(reply.headers['content-type'], 'text/x-denied');
      assert.equal(reply.headers['x-hidden'], undefined);
      assert.equal(upstream.seen.length, seen);
    });

    test(`${protocol}: a 5xx or no answer in time is an error: 403, or status_on_error`, async () => {
      const crash = await send('main', { path: '/api', headers: { authorization: 'Bearer crash' } });
      assert.deepEqual([crash.status, crash.body], [403, '']);
      const slow = await send('main', { path: '/api', headers: { authorization: 'Bearer slow' } });
      assert.equal(slow.status, 403);
      assert.equal((await send('closed', { path: '/api', headers: { authorization: 'Bearer allow' } })).status, 503);
    });

    test(`${protocol}: failure_mode_allow lets a request through when the server is down`, async () => {
      const reply = await send('allow', { path: '/api', headers: { authorization: 'Bearer allow' } });
      assert.equal(reply.status, 200);
      assert.equal(upstreamSaw(reply.body).headers['x-authz-user'], undefined);
    });

    test(`${protocol}: a route's ExtAuthzPerRoute disabled skips the check`, async () => {
      const before = authz.seen.length;
      assert.equal((await send('main', { path: '/public', headers: { authorization: 'Bearer nope' } })).status, 200);
      assert.equal(authz.seen.length, before);
    });

    test(`${protocol}: clear_route_cache routes the request again with the server's headers; without it, the first route stands`, async () => {
      const rerouted = await send('reroute', { path: '/api', headers: { authorization: 'Bearer reroute' } });
      assert.equal(upstreamSaw(rerouted.body).upstream, 'other');
      const kept = await send('main', { path: '/api', headers: { authorization: 'Bearer reroute' } });
      assert.deepEqual([upstreamSaw(kept.body).upstream, upstreamSaw(kept.body).headers['x-route']], ['web', 'b']);
    });

    test(`${protocol}: filter_enabled off skips the check; with deny_at_disable the request is answered status_on_error`, async () => {
      const before = authz.seen.length;
      assert.equal((await send('skip', { path: '/api', headers: { authorization: 'Bearer nope' } })).status, 200);
      const denied = await send('deny', { path: '/api', headers: { authorization: 'Bearer allow' } });
      assert.deepEqual([denied.status, denied.body], [403, '']);
      assert.equal(authz.seen.length, before);
    });

    test(`${protocol}: with_request_body sends the body; 413 past max_request_bytes; a partial body when allowed`, async () => {
      let before = authz.seen.length;
      const reply = await send('body', { method: 'POST', path: '/upload', headers: { authorization: 'Bearer allow' }, body: 'hello' });
      assert.equal(reply.status, 200);
      assert.equal(upstreamSaw(reply.body).bodyBytes, 5);
      const check = authz.seen[before]!;
      assert.deepEqual([check.method, check.body, check.headers['content-length'], check.headers['x-proxy-auth-partial-body']], ['POST', 'hello', '5', 'false']);
      before = authz.seen.length;
      assert.equal((await send('body', { method: 'POST', path: '/upload', headers: { authorization: 'Bearer allow' }, body: 'x'.repeat(20) })).status, 413);
      assert.equal(authz.seen.length, before);
      const partial = await send('partial', { method: 'POST', path: '/upload', headers: { authorization: 'Bearer allow' }, body: 'abcdefgh' });
      assert.equal(partial.status, 200);
      assert.equal(upstreamSaw(partial.body).bodyBytes, 8);
      const cut = authz.seen[before]!;
      assert.deepEqual([cut.body, cut.headers['x-proxy-auth-partial-body']], ['abcd', 'true']);
    });
  }

  test('the counters, the filter\'s and the route cluster\'s, in /stats and /stats/prometheus', async () => {
    const stat = (name: string) => proxy.stat(name);
    assert.deepEqual(
      await Promise.all(['ok', 'denied', 'error', 'failure_mode_allowed'].map((n) => stat(`http.main.ext_authz.${n}`))),
      [4, 2, 4, 0],
    );
    assert.deepEqual(await Promise.all(['error', 'failure_mode_allowed'].map((n) => stat(`http.allow.ext_authz.${n}`))), [2, 2]);
    assert.equal(await stat('cluster.web.ext_authz.denied'), 2);
    assert.equal(await stat('cluster.web.ext_authz.failure_mode_allowed'), 2);
    const prometheus = (await proxy.admin('/stats/prometheus')).body;
    assert.match(prometheus, /^proxy_http_ext_authz_denied\{proxy_http_conn_manager_prefix="main"\} 2$/m);
    assert.match(prometheus, /^proxy_cluster_ext_authz_denied\{proxy_cluster_name="web"\} 2$/m);
  });
});

test('--mode validate refuses ext_authz configs by field path', TIMEOUT, async () => {
  const dir = makeTempDir();
  try {
    const hcm = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config';
    const filterPath = `${hcm}.http_filters[0].typed_config`;
    const cases: Array<{ name: string; filter: Json; perRoute?: Json; error: string | null }> = [
      { name: 'valid', filter: { http_service: httpService('authz'), failure_mode_allow: true }, perRoute: { check_settings: { context_extensions: { a: 'b' } } }, error: null },
      { name: 'no service', filter: { failure_mode_allow: true }, error: `${filterPath}.grpc_service: an authorization service is required: grpc_service or http_service` },
      {
        name: 'a variable in headers_to_add',
        filter: { http_service: httpService('authz', { authorization_request: { headers_to_add: [{ key: 'x', value: '%DOWNSTREAM_REMOTE_ADDRESS%' }] } }) },
        error: `${filterPath}.http_service.authorization_request.headers_to_add[0].value: only literal text is supported here by this build (a %VARIABLE% needs the stream context the check request is made without)`,
      },
      { name: 'google_grpc', filter: { grpc_service: { google_grpc: { target_uri: 'x', stat_prefix: 'x' } } }, error: `${filterPath}.grpc_service.google_grpc:` },
      { name: 'a field after 1.16', filter: { http_service: httpService('authz'), stat_prefix: 'x' }, error: `${filterPath}.stat_prefix:` },
      { name: 'a bad regex', filter: { http_service: httpService('authz', { authorization_response: { allowed_client_headers: { patterns: [{ safe_regex: { google_re2: {}, regex: '(' } }] } } }) }, error: `${filterPath}.http_service.authorization_response.allowed_client_headers.patterns[0].safe_regex` },
      { name: 'an empty per-route entry', filter: { http_service: httpService('authz') }, perRoute: {}, error: `${hcm}.route_config.virtual_hosts[0].routes[0].typed_per_filter_config["envoy.filters.http.ext_authz"]` },
    ];
    const results = await mapLimited(cases, 2, (row) => {
      const config = servableV3('/dev/null');
      const typed = config.static_resources.listeners[1].filter_chains[0].filters[0].typed_config;
      typed.http_filters.unshift(authzFilter(row.filter));
      if (row.perRoute !== undefined) typed.route_config.virtual_hosts[0].routes[0].typed_per_filter_config = { 'envoy.filters.http.ext_authz': { '@type': PER_ROUTE_TYPE, ...row.perRoute } };
      config.static_resources.clusters.push(localCluster('authz', 1));
      const configPath = path.join(dir, `${row.name.replace(/\W+/g, '_')}.json`);
      fs.writeFileSync(configPath, JSON.stringify(config));
      return runToExit(['-c', configPath, '--mode', 'validate']).then((result) => ({ ...result, configPath }));
    });
    cases.forEach((row, i) => {
      const { code, stdout, stderr, configPath } = results[i]!;
      if (row.error === null) {
        assert.deepEqual({ code, stdout }, { code: 0, stdout: `configuration '${configPath}' OK\n` }, stderr);
        return;
      }
      assert.equal(code, 1, row.name);
      assert.ok(stderr.includes(`${configPath}: ${row.error}`), `${row.name}: ${stderr}`);
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
