import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import type { HeaderMatch, HealthCheckConfig, HttpFilterConfig } from '../../src/config/model';
import { ConfigError, ConfigErrors } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import { RequestHead } from '../../src/http/message';
import { HeaderMatcher, matchAll } from '../../src/filters/http/header_matcher';
import { clustersHealthy, HealthCheckCache } from '../../src/filters/http/health_check';
import { ClusterManager } from '../../src/upstream/worker/cluster_manager';
import { staticSnapshots } from '../helpers/membership';
import { createHeapStatsStore } from '../../src/stats/store';
import { ManualClock } from '../helpers/manual_clock';
import { Json, v3Bootstrap } from '../helpers/config_fixtures';
import { directRoute, httpConnectionManager, listener, silentLogger, startDataPlane, staticCluster, virtualHost, clusterRoute } from '../helpers/data_plane';
import { request, startUpstream } from '../helpers/http_peers';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const TIMEOUT = { timeout: 20_000 };
const HEALTH_CHECK_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck';

function head(method: string, path: string, headers: string[] = [], authority = 'example.com'): RequestHead {
  const h = new RequestHead(method, path, false);
  h.authority = authority;
  h.headers.push(...headers);
  return h;
}

function matcher(name: string, specifier: HeaderMatch['specifier'], invert = false): HeaderMatcher {
  return new HeaderMatcher({ name, specifier, invert });
}

test('header matchers: each kind, inversion, pseudo-headers, the first of repeated headers', () => {
  const req = head('GET', '/healthz?full=1', ['x-env', 'prod-eu', 'x-n', ' 42 ', 'x-env', 'staging', 'x-empty', '']);
  const cases: [HeaderMatcher, boolean][] = [
    [matcher(':path', { kind: 'exact', value: '/healthz?full=1' }), true],
    [matcher(':path', { kind: 'exact', value: '/healthz' }), false],
    [matcher(':method', { kind: 'exact', value: 'GET' }), true],
    [matcher(':authority', { kind: 'suffix', value: '.com' }), true],
    [matcher('x-env', { kind: 'prefix', value: 'prod' }), true],
    // 1.16 looks at the first value only.
    [matcher('x-env', { kind: 'exact', value: 'staging' }), false],
    [matcher('x-env', { kind: 'safe_regex', regex: 'prod-[a-z]+' }), true],
    // A full match, not a search.
    [matcher('x-env', { kind: 'safe_regex', regex: 'prod' }), false],
    [matcher('x-n', { kind: 'range', start: '40', end: '43' }), true],
    [matcher('x-n', { kind: 'range', start: '40', end: '42' }), false],
    [matcher('x-env', { kind: 'range', start: '0', end: '100' }), false],
    [matcher('x-empty', { kind: 'present' }), true],
    [matcher('x-missing', { kind: 'present' }), false],
    // An empty exact_match matches any value of a present header.
    [matcher('x-env', { kind: 'exact', value: '' }), true],
    [matcher('x-missing', { kind: 'exact', value: '' }), false],
    [matcher('x-env', { kind: 'prefix', value: 'prod' }, true), false],
    [matcher('x-env', { kind: 'prefix', value: 'dev' }, true), true],
    // A missing header matches only an inverted present_match.
    [matcher('x-missing', { kind: 'present' }, true), true],
    [matcher('x-missing', { kind: 'exact', value: 'a' }, true), false],
    [matcher('x-n', { kind: 'range', start: '-10', end: '10' }, true), true],
  ];
  cases.forEach(([m, expected], i) => assert.equal(m.matches(req), expected, `case ${i}: ${JSON.stringify(m.config)}`));
  assert.equal(matchAll([], req), true);
  assert.equal(matchAll([cases[0]![0], cases[4]![0]], req), true);
  assert.equal(matchAll([cases[0]![0], cases[1]![0]], req), false);
  assert.equal(matcher('x-n', { kind: 'range', start: '-50', end: '0' }).matches(head('GET', '/', ['x-n', '+5'])), false);
  assert.equal(matcher('x-n', { kind: 'range', start: '0', end: '10' }).matches(head('GET', '/', ['x-n', '+5'])), true);
  assert.equal(matcher('x-n', { kind: 'range', start: '0', end: '10' }).matches(head('GET', '/', ['x-n', '99999999999999999999'])), false);
});

test('the cache keeps an answer until the end of the cache_time period it was stored in', () => {
  const clock = new ManualClock();
  const cache = new HealthCheckCache(clock, 1000);
  assert.equal(cache.useCachedResponse(), false);
  clock.advance(200);
  cache.setCachedResponse(500, true);
  assert.equal(cache.useCachedResponse(), true);
  assert.deepEqual(cache.cachedResponse(), { status: 500, degraded: true });
  clock.advance(799);
  assert.equal(cache.useCachedResponse(), true);
  // Envoy's timer clears it every period, whenever within the period it was stored.
  clock.advance(1);
  assert.equal(cache.useCachedResponse(), false);
  cache.setCachedResponse(200, false);
  clock.advance(999);
  assert.equal(cache.useCachedResponse(), true);
  clock.advance(1);
  assert.equal(cache.useCachedResponse(), false);
});

test('min healthy percentages: healthy and degraded hosts count, a missing or empty cluster fails', () => {
  const stats = createHeapStatsStore();
  const configs = [
    staticCluster('half', [{ port: 1 }, { port: 2, health: 'DEGRADED' }, { port: 3, health: 'UNHEALTHY' }, { port: 4, health: 'UNHEALTHY' }]),
    staticCluster('empty', []),
  ];
  const clusters = new ClusterManager({ configs, snapshots: staticSnapshots(configs, stats.hosts), store: stats, runtime: new LiveRuntime([]), log: () => silentLogger });
  try {
    assert.equal(clustersHealthy(clusters, {}), true);
    assert.equal(clustersHealthy(clusters, { half: 50 }), true);
    assert.equal(clustersHealthy(clusters, { half: 50.1 }), false);
    assert.equal(clustersHealthy(clusters, { half: 0, empty: 0 }), true);
    assert.equal(clustersHealthy(clusters, { empty: 1 }), false);
    assert.equal(clustersHealthy(clusters, { nowhere: 0 }), false);
    assert.equal(clustersHealthy(clusters, { half: 10, empty: 5 }), false);
  } finally {
    clusters.close();
  }
});

function healthCheckFilter(config: Partial<HealthCheckConfig>): HttpFilterConfig {
  return {
    name: 'proxy.filters.http.health_check',
    healthCheck: {
      passThroughMode: false,
      cacheTimeMs: 0,
      clusterMinHealthyPercentages: {},
      headers: [{ name: ':path', invert: false, specifier: { kind: 'exact', value: '/healthz' } }],
      ...config,
    },
  };
}

test('the filter chain: the health check filter answers before the router, adds its headers, and the rest goes upstream', TIMEOUT, async (t) => {
  const upstreamStatus = { code: 200 };
  const upstream = await startUpstream('web', (_req, res) => {
    res.statusCode = upstreamStatus.code;
    res.setHeader('x-proxy-upstream-healthchecked-cluster', 'spoofed');
    res.end('from upstream');
  });
  t.after(() => upstream.close());
  let failed = false;
  const clock = new ManualClock();
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'web')])];
  const chain = (filter: HttpFilterConfig) => httpConnectionManager(routes, { httpFilters: [filter, { name: 'proxy.filters.http.router' }] });
  const dp = await startDataPlane(
    [
      listener('local', chain(healthCheckFilter({ clusterMinHealthyPercentages: { web: 100 } }))),
      listener('pass', chain(healthCheckFilter({ passThroughMode: true, cacheTimeMs: 1000 }))),
      listener('gone', chain(healthCheckFilter({ clusterMinHealthyPercentages: { absent: 0 } }))),
      listener('plain', httpConnectionManager([virtualHost('all', ['*'], [directRoute({ prefix: '/' }, 204, '')])])),
    ],
    [staticCluster('web', [{ port: upstream.port }])],
    { healthCheckFailed: () => failed, clock, serviceCluster: 'front' },
  );
  t.after(() => dp.close());
  const local = dp.port('local');
  const pass = dp.port('pass');

  // Not pass-through: answered here, no upstream request, even with a request body.
  let r = await request(local, { path: '/healthz' });
  assert.deepEqual([r.status, r.body, r.headers['x-proxy-upstream-healthchecked-cluster']], [200, '', 'front']);
  r = await request(local, { method: 'POST', path: '/healthz', body: 'x'.repeat(10_000) });
  assert.equal(r.status, 200);
  assert.equal(upstream.seen.length, 0);
  assert.equal((await request(dp.port('gone'), { path: '/healthz' })).status, 503);
  // Other requests go on to the router; the filter leaves their responses alone while healthy.
  r = await request(local, { path: '/other' });
  assert.deepEqual([r.status, r.body, r.headers['x-proxy-immediate-health-check-fail']], [200, 'from upstream', undefined]);
  assert.equal(upstream.seen.length, 1);

  // Pass-through: the upstream answers and the answer is cached for the rest of the period.
  upstreamStatus.code = 500;
  r = await request(pass, { path: '/healthz' });
  // The filter's header replaces the upstream's.
  assert.deepEqual([r.status, r.body, r.headers['x-proxy-upstream-healthchecked-cluster']], [500, 'from upstream', 'front']);
  upstreamStatus.code = 200;
  r = await request(pass, { path: '/healthz' });
  assert.deepEqual([r.status, r.body], [500, '']);
  assert.equal(upstream.seen.length, 2);
  clock.advance(1000);
  assert.equal((await request(pass, { path: '/healthz' })).status, 200);
  assert.equal(upstream.seen.length, 3);

  // Failed: health checks get 503 whatever the mode; other responses carry the immediate-fail header.
  failed = true;
  for (const port of [local, pass]) {
    r = await request(port, { path: '/healthz' });
    assert.deepEqual([r.status, r.headers['x-proxy-upstream-healthchecked-cluster']], [503, 'front']);
    r = await request(port, { path: '/other' });
    assert.deepEqual([r.status, r.headers['x-proxy-immediate-health-check-fail']], [200, 'true']);
  }
  // A listener without the filter knows nothing of it.
  r = await request(dp.port('plain'), { path: '/healthz' });
  assert.deepEqual([r.status, r.headers['x-proxy-immediate-health-check-fail']], [204, undefined]);
  // Envoy caches its own 503 too: after /healthcheck/ok it lasts until the period ends.
  failed = false;
  assert.equal((await request(pass, { path: '/healthz' })).status, 503);
  assert.equal((await request(local, { path: '/healthz' })).status, 200);
  clock.advance(1000);
  assert.equal((await request(pass, { path: '/healthz' })).status, 200);
});

test('a health check filter after the router, or one this build lacks, is refused', () => {
  const errors: [(b: Json) => void, RegExp][] = [
    [(b) => hcmOf(b).http_filters.push(hcFilter({ pass_through_mode: false })), /http_filters\[0\]\.name: terminal filter named proxy\.filters\.http\.router must be the last/],
    [(b) => hcmOf(b).http_filters.unshift({ name: 'envoy.filters.http.lua' }), /http_filters\[0\]\.name: Didn't find a registered implementation for name: 'proxy\.filters\.http\.lua'/],
  ];
  for (const [change, expected] of errors) {
    const bootstrap = v3Bootstrap();
    change(bootstrap);
    assert.throws(() => loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false }), (e: unknown) => e instanceof ConfigError && expected.test(e.message));
  }
});

const HCM_PATH = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config';
const hcmOf = (b: Json): Json => b.static_resources.listeners[1].filter_chains[0].filters[0].typed_config;
const hcFilter = (config: Json, name = 'envoy.filters.http.health_check'): Json => ({ name, typed_config: { '@type': HEALTH_CHECK_TYPE, ...config } });

function loadWithFilter(filter: Json): ReturnType<typeof loadBootstrap> {
  const bootstrap = v3Bootstrap();
  hcmOf(bootstrap).http_filters.unshift(filter);
  return loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
}

test('health check config: the model, the names Envoy 1.16 accepts, the v2 form', () => {
  const { bootstrap } = loadWithFilter(
    hcFilter({
      pass_through_mode: false,
      cluster_min_healthy_percentages: { web: { value: 25.5 } },
      headers: [
        { name: ':PATH', exact_match: '/healthz' },
        { name: 'x-n', range_match: { start: '1', end: '9' }, invert_match: true },
        { name: 'x-re', safe_regex_match: { google_re2: {}, regex: 'a+' } },
        { name: 'x-p', present_match: true },
      ],
    }),
  );
  const hcm = bootstrap.listeners[1]!.filterChains[0]!.filters[0]!;
  assert.equal(hcm.kind, 'http_connection_manager');
  const filter = hcm.kind === 'http_connection_manager' ? hcm.httpFilters[0]! : null;
  assert.deepEqual(filter, {
    name: 'proxy.filters.http.health_check',
    healthCheck: {
      passThroughMode: false,
      cacheTimeMs: 0,
      clusterMinHealthyPercentages: { web: 25.5 },
      headers: [
        { name: ':path', invert: false, specifier: { kind: 'exact', value: '/healthz' } },
        { name: 'x-n', invert: true, specifier: { kind: 'range', start: '1', end: '9' } },
        { name: 'x-re', invert: false, specifier: { kind: 'safe_regex', regex: 'a+' } },
        { name: 'x-p', invert: false, specifier: { kind: 'present' } },
      ],
    },
  });
  for (const name of ['envoy.health_check', 'proxy.filters.http.health_check']) {
    const loaded = loadWithFilter(hcFilter({ pass_through_mode: true, cache_time: '2.5s' }, name)).bootstrap.listeners[1]!.filterChains[0]!.filters[0]!;
    assert.ok(loaded.kind === 'http_connection_manager');
    assert.deepEqual(loaded.httpFilters[0], {
      name: 'proxy.filters.http.health_check',
      // Envoy ignores the percentages in pass-through mode.
      healthCheck: { passThroughMode: true, cacheTimeMs: 2500, clusterMinHealthyPercentages: {}, headers: [] },
    });
  }
  const v2 = loadWithFilter({ name: 'envoy.health_check', typed_config: { '@type': 'type.googleapis.com/envoy.config.filter.http.health_check.v2.HealthCheck', pass_through_mode: true } });
  const v2Hcm = v2.bootstrap.listeners[1]!.filterChains[0]!.filters[0]!;
  assert.ok(v2Hcm.kind === 'http_connection_manager');
  assert.equal(v2Hcm.httpFilters[0]!.healthCheck?.passThroughMode, true);
});

test('health check config errors carry the field path', () => {
  const at = `${HCM_PATH}.http_filters[0].typed_config`;
  const cases: [Json, string][] = [
    [{}, `${at}.pass_through_mode: value is required`],
    [{ pass_through_mode: false, cache_time: '1s' }, `${at}.cache_time: cache_time must not be set when pass_through_mode is disabled`],
    [{ pass_through_mode: true, cache_time: '-1s' }, `${at}.cache_time: must not be negative, got -1s`],
    [{ pass_through_mode: false, headers: [{ exact_match: 'x' }] }, `${at}.headers[0].name: value length must be at least 1 runes`],
    [{ pass_through_mode: false, headers: [{ name: 'a', prefix_match: '' }] }, `${at}.headers[0].prefix_match: value length must be at least 1 runes`],
    [{ pass_through_mode: false, headers: [{ name: 'a\nb', present_match: true }] }, `${at}.headers[0].name: value must be a valid HTTP header name`],
    [{ pass_through_mode: false, headers: [{ name: 'a', safe_regex_match: { google_re2: {}, regex: '(a' } }] }, `${at}.headers[0].safe_regex_match.regex: invalid regex '(a': missing closing )`],
    [{ pass_through_mode: false, cluster_min_healthy_percentages: { web: { value: 101 } } }, `${at}.cluster_min_healthy_percentages["web"].value: value must be inside range [0, 100]`],
  ];
  for (const [config, error] of cases) {
    assert.throws(() => loadWithFilter(hcFilter(config)), (e: unknown) => {
      assert.ok(e instanceof ConfigError, error);
      assert.equal(e.message, `--config-yaml: ${error}`);
      return true;
    });
  }
});

/** The field paths loading refuses (its capability check among them); none when it loads. */
function refusedPaths(load: () => unknown): string[] {
  try {
    load();
    return [];
  } catch (e) {
    if (e instanceof ConfigErrors) return e.all.map((f) => f.fieldPath);
    if (e instanceof ConfigError) return [e.fieldPath];
    throw e;
  }
}

test('capabilities: header matchers Envoy 1.16 lacks are refused by field path', () => {
  const load = (filter: Json) => {
    const bootstrap = v3Bootstrap();
    hcmOf(bootstrap).http_filters.unshift(filter);
    return () => loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
  };
  const filterPath = `${HCM_PATH}.http_filters[0]`;
  const refused = refusedPaths(load(hcFilter({ pass_through_mode: false, headers: [{ name: 'a', contains_match: 'b' }] })));
  assert.ok(refused.includes(`${filterPath}.typed_config.headers[0].contains_match`), refused.join('\n'));
  const ok = load(
    hcFilter({ pass_through_mode: true, cache_time: '1s', headers: [{ name: 'a', suffix_match: 'b', invert_match: true }], cluster_min_healthy_percentages: { web: { value: 5 } } }),
  );
  assert.deepEqual(refusedPaths(ok).filter((p) => p.startsWith(filterPath)), []);
});
