// proxy.filters.http.ratelimit through the real binary, over HTTP/1.1 and h2c, against a
// RateLimitService the test runs (@grpc/grpc-js, v3 and v2 methods): descriptors as the route's
// and virtual host's actions make them, OK letting the request on with the service's headers and
// the x-ratelimit-* ones, OVER_LIMIT answering 429 (or not, in shadow), a service that fails,
// times out or is down letting requests on (500 with failure_mode_deny), request_type, the
// counters in /stats and /stats/prometheus, and --mode validate refusing bad configs by path.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { after, before, describe, test } from 'node:test';
import { servableV3 } from '../helpers/cli_bootstraps';
import { mapLimited, runToExit } from '../helpers/cli_runs';
import type { Json } from '../helpers/config_fixtures';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { listenerClients, type Reply, startUpstream, type Upstream } from '../helpers/http_peers';
import { makeTempDir, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { type Answer, type RecordedCall, RateLimitService, SHOULD_RATE_LIMIT } from '../helpers/rate_limit_service';

const TIMEOUT = { timeout: 90_000 };
const RATE_LIMIT_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit';
const PER_ROUTE_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute';
const FILE_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';
const SERVICE_CLUSTER = 'edge-proxy';

const rateLimitFilter = (fields: Json): Json => ({
  name: 'envoy.filters.http.ratelimit',
  typed_config: { '@type': RATE_LIMIT_TYPE, domain: 'edge', rate_limit_service: { transport_api_version: 'V3', grpc_service: { envoy_grpc: { cluster_name: 'rls' } } }, ...fields },
});
const key = (value: string): Json => ({ generic_key: { descriptor_value: value } });
const limited = (value: string): Json => ({ cluster: 'web', rate_limits: [{ actions: [key(value)] }] });

/** The routes every listener has: each `generic_key` tells the service how to answer. */
const ROUTES: Json[] = [
  { match: { prefix: '/ok' }, route: limited('ok') },
  { match: { prefix: '/over' }, route: limited('over') },
  { match: { prefix: '/slow' }, route: limited('slow') },
  { match: { prefix: '/fail' }, route: limited('fail') },
  {
    match: { prefix: '/descriptors' },
    route: {
      cluster: 'web',
      include_vh_rate_limits: true,
      rate_limits: [
        { actions: [{ source_cluster: {} }, { destination_cluster: {} }, { generic_key: { descriptor_key: 'kind', descriptor_value: 'ok' } }] },
        { actions: [{ request_headers: { header_name: 'X-User', descriptor_key: 'user' } }, key('users')] },
        { actions: [{ request_headers: { header_name: 'x-plan', descriptor_key: 'plan', skip_if_absent: true } }, { header_value_match: { descriptor_value: 'beta', headers: [{ name: 'x-beta', exact_match: '1' }] } }] },
        { actions: [{ header_value_match: { descriptor_value: 'not-admin', expect_match: false, headers: [{ name: 'x-admin', present_match: true }] } }] },
        { stage: 1, actions: [key('other-stage')] },
        { disable_key: 'off', actions: [key('disabled')] },
      ],
    },
  },
  // Without rate_limits of its own the route takes its virtual host's, unless its per-route config ignores them.
  { match: { prefix: '/vhost' }, route: { cluster: 'web' } },
  { match: { prefix: '/none' }, route: { cluster: 'web' }, typed_per_filter_config: { 'envoy.filters.http.ratelimit': { '@type': PER_ROUTE_TYPE, vh_rate_limits: 'IGNORE' } } },
];

/** A listener with the rate limit filter configured by `fields`, and the virtual host's own rate_limits. */
function listener(name: string, fields: Json, logPath: string): Json {
  const config = httpListener(name, 0, ROUTES, {
    stat_prefix: name,
    http_filters: [rateLimitFilter(fields), { name: 'envoy.filters.http.router' }],
    access_log: [{ name: 'envoy.access_loggers.file', typed_config: { '@type': FILE_LOG, path: logPath, log_format: { text_format: `${name} %REQ(:PATH)% %RESPONSE_CODE% %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS%\n` } } }],
  });
  config.filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].rate_limits = [{ actions: [{ remote_address: {} }, key('vhost')] }];
  return config;
}

/** How the service answers: by the first descriptor's generic_key. */
function answer(call: RecordedCall): Answer {
  const keys = call.descriptors.flat();
  const statuses = [
    { code: 'OK', current_limit: { requests_per_unit: 10, unit: 'MINUTE', name: 'per-user' }, limit_remaining: 7, duration_until_reset: { seconds: 30 } },
    { code: 'OK', current_limit: { requests_per_unit: 100, unit: 'HOUR' }, limit_remaining: 3, duration_until_reset: { seconds: 1200 } },
    { code: 'OK' },
  ];
  if (keys.includes('generic_key=over')) {
    return {
      response: {
        overall_code: 'OVER_LIMIT',
        statuses: [{ code: 'OVER_LIMIT', current_limit: { requests_per_unit: 5, unit: 'SECOND' }, limit_remaining: 0, duration_until_reset: { seconds: 1 } }],
        response_headers_to_add: [{ key: 'X-Rls', value: 'over' }],
      },
    };
  }
  if (keys.includes('generic_key=fail')) return { error: grpc.status.UNAVAILABLE };
  const response = { overall_code: 'OK', statuses, response_headers_to_add: [{ key: 'x-rls', value: 'ok' }], request_headers_to_add: [{ key: 'x-rls-plan', value: 'gold' }] };
  return keys.includes('generic_key=slow') ? { response, delayMs: 3000 } : { response };
}

describe('the rate limit filter on HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstream: Upstream;
  let service: RateLimitService;
  let proxy: RunningProxy;
  let logDir: string;
  const ports: Record<string, number> = {};
  const clients = listenerClients(ports);
  const logPath = (): string => path.join(logDir, 'access.log');

  before(async () => {
    logDir = makeTempDir();
    upstream = await startUpstream('web');
    service = await RateLimitService.start(answer);
    const listeners = [
      // v3, the x-ratelimit-* headers, failures let through.
      // The call timeout leaves a loaded machine time for a prompt answer; /slow's comes well after it.
      listener('main', { enable_x_ratelimit_headers: 'DRAFT_VERSION_03', timeout: '1s' }, logPath()),
      // v2 (AUTO), failures answered 500, a limited gRPC request RESOURCE_EXHAUSTED, initial_metadata.
      listener(
        'deny',
        {
          domain: 'strict',
          failure_mode_deny: true,
          rate_limited_as_resource_exhausted: true,
          rate_limit_service: { grpc_service: { envoy_grpc: { cluster_name: 'rls' }, initial_metadata: [{ key: 'X-Tenant', value: 't1' }] } },
        },
        logPath(),
      ),
      // A service nobody listens for.
      listener('down', { rate_limit_service: { transport_api_version: 'V3', grpc_service: { envoy_grpc: { cluster_name: 'rls_down' } } } }, logPath()),
      listener('internal', { request_type: 'internal' }, logPath()),
    ];
    const rls = { ...localCluster('rls', service.port), http2_protocol_options: {} };
    const down = { ...localCluster('rls_down', 1), http2_protocol_options: {} };
    const runtime = { layers: [{ name: 'static', static_layer: { 'ratelimit.off.http_filter_enabled': 0 } }, { name: 'admin', admin_layer: {} }] };
    proxy = await startProxy({ static_resources: { listeners, clusters: [localCluster('web', upstream.port), rls, down] }, layered_runtime: runtime }, ['--service-cluster', SERVICE_CLUSTER, '--file-flush-interval-msec', '100']);
    for (const name of ['main', 'deny', 'down', 'internal']) ports[name] = await proxy.listenerPort(name);
  });

  after(async () => {
    clients.close();
    await proxy?.cleanup();
    service?.close();
    await upstream?.close();
    if (logDir !== undefined) fs.rmSync(logDir, { recursive: true, force: true });
  });

  const counter = async (name: string): Promise<number> => (await proxy.stat(`cluster.web.ratelimit.${name}`)) ?? 0;
  const counters = async (): Promise<Record<string, number>> =>
    Object.fromEntries(await Promise.all(['ok', 'over_limit', 'error', 'failure_mode_allowed'].map(async (name) => [name, await counter(name)])));
  const delta = (before: Record<string, number>, now: Record<string, number>): Record<string, number> => Object.fromEntries(Object.keys(now).map((name) => [name, now[name]! - before[name]!]));
  const logged = (line: string): Promise<boolean> => waitFor(`access log line '${line}'`, () => (fs.existsSync(logPath()) && fs.readFileSync(logPath(), 'utf8').split('\n').includes(line) ? true : undefined));
  const passed = (reply: Reply): void => {
    assert.equal(reply.status, 200, reply.body);
    assert.equal(JSON.parse(reply.body).upstream, 'web');
  };

  for (const [protocol, send] of clients.protocols) {
    test(`${protocol}: OK lets the request on with the service's request headers; its response headers and x-ratelimit-* come back`, async () => {
      const before = await counters();
      const calls = service.calls.length;
      const reply = await send('main', { path: '/ok' });
      passed(reply);
      assert.equal(JSON.parse(reply.body).headers['x-rls-plan'], 'gold');
      assert.equal(reply.headers['x-rls'], 'ok');
      assert.equal(reply.headers['x-ratelimit-limit'], '100, 10;w=60;name="per-user", 100;w=3600');
      assert.equal(reply.headers['x-ratelimit-remaining'], '3');
      assert.equal(reply.headers['x-ratelimit-reset'], '1200');
      assert.equal(reply.headers['x-proxy-ratelimited'], undefined);
      const call = service.calls[calls]!;
      assert.deepEqual({ path: call.path, domain: call.domain, descriptors: call.descriptors }, { path: SHOULD_RATE_LIMIT.V3, domain: 'edge', descriptors: [['generic_key=ok']] });
      assert.deepEqual(delta(before, await counters()), { ok: 1, over_limit: 0, error: 0, failure_mode_allowed: 0 });
    });

    test(`${protocol}: OVER_LIMIT answers 429 with x-proxy-ratelimited, the service's headers and x-ratelimit-*; the upstream never sees it`, async () => {
      const before = await counters();
      const rq429 = (await proxy.stat('cluster.web.upstream_rq_429')) ?? 0;
      const seen = upstream.seen.length;
      const reply = await send('main', { path: '/over' });
      assert.equal(reply.status, 429);
      assert.equal(reply.body, '');
      assert.equal(reply.headers['x-proxy-ratelimited'], 'true');
      assert.equal(reply.headers['x-rls'], 'over');
      assert.equal(reply.headers['x-ratelimit-limit'], '5, 5;w=1');
      assert.equal(reply.headers['x-ratelimit-remaining'], '0');
      assert.equal(reply.headers['x-ratelimit-reset'], '1');
      assert.equal(upstream.seen.length, seen);
      assert.deepEqual(delta(before, await counters()), { ok: 0, over_limit: 1, error: 0, failure_mode_allowed: 0 });
      assert.equal(await proxy.stat('cluster.web.upstream_rq_429'), rq429 + 1);
      await logged('main /over 429 RL request_rate_limited');
    });

    test(`${protocol}: a service that fails, times out or is down lets the request on, counted as errors allowed`, async () => {
      const before = await counters();
      passed(await send('main', { path: '/fail' }));
      passed(await send('main', { path: '/slow' }));
      passed(await send('down', { path: '/ok' }));
      assert.deepEqual(delta(before, await counters()), { ok: 0, over_limit: 0, error: 3, failure_mode_allowed: 3 });
    });

    test(`${protocol}: with failure_mode_deny a failed call answers 500; v2's method, the domain and initial_metadata reach the service`, async () => {
      const before = await counters();
      const calls = service.calls.length;
      const reply = await send('deny', { path: '/fail' });
      assert.equal(reply.status, 500);
      await logged('deny /fail 500 RLSE rate_limiter_error');
      passed(await send('deny', { path: '/ok' }));
      assert.deepEqual(delta(before, await counters()), { ok: 1, over_limit: 0, error: 1, failure_mode_allowed: 0 });
      const call = service.calls[calls]!;
      assert.deepEqual({ path: call.path, domain: call.domain, tenant: call.metadata['x-tenant'] }, { path: SHOULD_RATE_LIMIT.V2, domain: 'strict', tenant: 't1' });
      // Without enable_x_ratelimit_headers the statuses add nothing.
      const ok = await send('deny', { path: '/ok' });
      assert.equal(ok.headers['x-ratelimit-limit'], undefined);
      assert.equal(ok.headers['x-rls'], 'ok');
    });

    test(`${protocol}: a limited gRPC request is answered RESOURCE_EXHAUSTED with rate_limited_as_resource_exhausted, else UNAVAILABLE`, async () => {
      const grpcHeaders = { 'content-type': 'application/grpc', te: 'trailers' };
      const exhausted = await send('deny', { method: 'POST', path: '/over', headers: grpcHeaders, body: Buffer.alloc(5) });
      assert.deepEqual([exhausted.status, exhausted.headers['grpc-status'], exhausted.headers['x-proxy-ratelimited']], [200, '8', 'true']);
      const unavailable = await send('main', { method: 'POST', path: '/over', headers: grpcHeaders, body: Buffer.alloc(5) });
      assert.deepEqual([unavailable.status, unavailable.headers['grpc-status']], [200, '14']);
    });

    test(`${protocol}: the descriptors the service gets are what the route's and virtual host's actions make`, async () => {
      const calls = service.calls.length;
      passed(await send('main', { path: '/descriptors', headers: { 'x-user': 'ada', 'x-beta': '1' } }));
      passed(await send('main', { path: '/descriptors', headers: { 'x-plan': 'pro', 'x-admin': 'yes' } }));
      passed(await send('main', { path: '/vhost' }));
      passed(await send('main', { path: '/none' }));
      const [first, second, vhost] = service.calls.slice(calls).map((call) => call.descriptors);
      const own = [`source_cluster=${SERVICE_CLUSTER}`, 'destination_cluster=web', 'kind=ok'];
      const host = ['remote_address=127.0.0.1', 'generic_key=vhost'];
      // Stage 1 and the disabled entry make none; a missing x-user drops its descriptor, a missing x-plan only its entry.
      assert.deepEqual(first, [own, ['user=ada', 'generic_key=users'], ['header_match=beta'], ['header_match=not-admin'], host]);
      assert.deepEqual(second, [own, host]);
      assert.deepEqual(vhost, [host]);
      // /none (IGNORE) made no call.
      assert.equal(service.calls.length, calls + 3);
    });

    test(`${protocol}: request_type internal asks only about internal requests`, async () => {
      const calls = service.calls.length;
      passed(await send('internal', { path: '/over' }));
      assert.equal(service.calls.length, calls);
      const reply = await send('internal', { path: '/over', headers: { 'x-forwarded-for': '10.0.0.1' } });
      assert.equal(reply.status, 429);
      assert.equal(service.calls.length, calls + 1);
    });
  }

  test('in shadow (ratelimit.http_filter_enforcing 0) OVER_LIMIT is counted and the request goes on with the headers', async () => {
    assert.equal((await proxy.admin('/runtime_modify?ratelimit.http_filter_enforcing=0', 'POST')).status, 200);
    try {
      const before = await counters();
      const [, send] = clients.protocols[0]!;
      const reply = await send('main', { path: '/over' });
      passed(reply);
      assert.equal(reply.headers['x-rls'], 'over');
      assert.equal(reply.headers['x-ratelimit-remaining'], '0');
      assert.equal(reply.headers['x-proxy-ratelimited'], undefined);
      assert.deepEqual(delta(before, await counters()), { ok: 0, over_limit: 1, error: 0, failure_mode_allowed: 0 });
    } finally {
      await proxy.admin('/runtime_modify?ratelimit.http_filter_enforcing', 'POST');
    }
  });

  test('the counters in /stats/prometheus, by cluster', async () => {
    const prometheus = (await proxy.admin('/stats/prometheus')).body;
    for (const name of ['ok', 'over_limit', 'error', 'failure_mode_allowed']) {
      const value = await counter(name);
      assert.ok(value > 0, name);
      assert.match(prometheus, new RegExp(`^proxy_cluster_ratelimit_${name}\\{proxy_cluster_name="web"\\} ${value}$`, 'm'));
    }
  });
});

test('--mode validate refuses rate limit configs by field path', TIMEOUT, async () => {
  const dir = makeTempDir();
  try {
    const hcm = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config';
    const route = `${hcm}.route_config.virtual_hosts[0].routes[0]`;
    const filter = `${hcm}.http_filters[0].typed_config`;
    const withFilter = (fields: Json) => (c: Json) => c.http_filters.unshift(rateLimitFilter(fields));
    const withRouteLimits = (rateLimits: Json) => (c: Json) => {
      c.http_filters.unshift(rateLimitFilter({}));
      c.route_config.virtual_hosts[0].routes[0].route.rate_limits = rateLimits;
    };
    const cases: Array<{ name: string; change: (hcm: Json) => void; error: string | null }> = [
      {
        name: 'valid',
        change: (c) => {
          withRouteLimits([{ stage: 2, disable_key: 'k', actions: [{ remote_address: {} }, { header_value_match: { descriptor_value: 'v', headers: [{ name: 'a', safe_regex_match: { google_re2: {}, regex: 'x+' } }] } }] }])(c);
          c.route_config.virtual_hosts[0].rate_limits = [{ actions: [{ source_cluster: {} }] }];
          c.route_config.virtual_hosts[0].typed_per_filter_config = { 'envoy.filters.http.ratelimit': { '@type': PER_ROUTE_TYPE, vh_rate_limits: 'INCLUDE' } };
        },
        error: null,
      },
      { name: 'no domain', change: withFilter({ domain: '' }), error: `${filter}.domain: value length must be at least 1 runes` },
      { name: 'a stage past 10', change: withFilter({ stage: 11 }), error: `${filter}.stage: value must be less than or equal to 10` },
      { name: 'a call timeout of the grpc_service', change: withFilter({ rate_limit_service: { grpc_service: { envoy_grpc: { cluster_name: 'rls' }, timeout: '1s' } } }), error: `${filter}.rate_limit_service.grpc_service.timeout: timeout is not read by Envoy 1.16's rate limit filter, whose own \`timeout\` bounds each call (set that instead)` },
      { name: 'a google_grpc service', change: withFilter({ rate_limit_service: { grpc_service: { google_grpc: { target_uri: 'x', stat_prefix: 'y' } } } }), error: `${filter}.rate_limit_service.grpc_service.google_grpc: google_grpc is not implemented by this build yet (it would be ignored)` },
      { name: "1.17's disable_x_envoy_ratelimited_header", change: withFilter({ disable_x_envoy_ratelimited_header: true }), error: `${filter}.disable_x_envoy_ratelimited_header: disable_x_envoy_ratelimited_header came after Envoy 1.16 (1.17): as in 1.16, every 429 of this filter carries x-proxy-ratelimited` },
      { name: 'a route stage past 10', change: withRouteLimits([{ stage: 11, actions: [key('x')] }]), error: `${route}.route.rate_limits[0].stage: value must be less than or equal to 10` },
      { name: 'a policy without actions', change: withRouteLimits([{ stage: 1 }]), error: `${route}.route.rate_limits[0].actions: value must contain at least 1 item(s)` },
      { name: 'a bad header_value_match regex', change: withRouteLimits([{ actions: [{ header_value_match: { descriptor_value: 'v', headers: [{ name: 'a', safe_regex_match: { google_re2: {}, regex: '((' } }] } }] }]), error: `${route}.route.rate_limits[0].actions[0].header_value_match.headers[0].safe_regex_match` },
      {
        name: 'a dynamic_metadata action',
        change: withRouteLimits([{ actions: [{ dynamic_metadata: { descriptor_key: 'k', metadata_key: { key: 'm', path: [{ key: 'p' }] } } }] }]),
        error: `${route}.route.rate_limits[0].actions[0].dynamic_metadata: dynamic_metadata is not supported by this build (no filter sets dynamic metadata for it to read)`,
      },
      {
        name: 'a limit override',
        change: withRouteLimits([{ actions: [key('x')], limit: { dynamic_metadata: { metadata_key: { key: 'm', path: [{ key: 'p' }] } } } }]),
        error: `${route}.route.rate_limits[0].limit: limit is not supported by this build (its override is read from dynamic metadata, which no filter sets)`,
      },
      {
        name: "a per-route config's later fields",
        change: (c) => (c.route_config.virtual_hosts[0].routes[0].typed_per_filter_config = { 'envoy.filters.http.ratelimit': { '@type': PER_ROUTE_TYPE, override_option: 'INCLUDE_POLICY' } }),
        error: `${route}.typed_per_filter_config["envoy.filters.http.ratelimit"].override_option: override_option is not implemented by this build yet (it would be ignored)`,
      },
    ];
    const results = await mapLimited(cases, 2, (row) => {
      const config = servableV3('/dev/null');
      row.change(config.static_resources.listeners[1].filter_chains[0].filters[0].typed_config);
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
