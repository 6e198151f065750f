// typed_per_filter_config on virtual hosts, routes and weighted clusters: what loading admits (the
// filters' per-route configs, by any of their names), what it refuses by field path, the models,
// and which entry a filter reads for a request (mostSpecificPerFilterConfig).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, ConfigErrors } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import type { HttpConnectionManagerConfig, Route, RouteConfiguration } from '../../src/config/model';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { mostSpecificPerFilterConfig, perFilterConfigChain, perFilterConfigsOf } from '../../src/filters/http/per_filter_config';
import { Json, v3Bootstrap } from '../helpers/config_fixtures';

const CSRF_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.csrf.v3.CsrfPolicy';
const RATE_LIMIT_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit';
const HCM_PATH = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config';
const VHOST_PATH = `${HCM_PATH}.route_config.virtual_hosts[0]`;
const ROUTE_PATH = `${VHOST_PATH}.routes[1]`;

const hcmOf = (b: Json): Json => b.static_resources.listeners[1].filter_chains[0].filters[0].typed_config;
const virtualHostOf = (b: Json): Json => hcmOf(b).route_config.virtual_hosts[0];
/** The route to a cluster (routes[0] is a direct response). */
const routeOf = (b: Json): Json => virtualHostOf(b).routes[1];

const csrf = (numerator: number, extra: Json = {}): Json => ({ '@type': CSRF_TYPE, filter_enabled: { default_value: { numerator } }, ...extra });
const rateLimit = (statPrefix: string, extra: Json = {}): Json => ({
  '@type': RATE_LIMIT_TYPE,
  stat_prefix: statPrefix,
  token_bucket: { max_tokens: 5, fill_interval: '1s' },
  ...extra,
});

function load(change: (bootstrap: Json) => void, disabled: readonly string[] = []): HttpConnectionManagerConfig {
  const bootstrap = v3Bootstrap();
  change(bootstrap);
  const extensions = builtinExtensions();
  const disabledExtensions = extensions.resolveDisabled(disabled).keys;
  const filter = loadBootstrap({ extensions, configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false, disabledExtensions }).bootstrap.listeners[1]!.filterChains[0]!.filters[0]!;
  assert.ok(filter.kind === 'http_connection_manager');
  return filter;
}

/** The field paths and reasons loading refuses; none when it loads. */
function refusals(change: (bootstrap: Json) => void, disabled: readonly string[] = []): string[] {
  try {
    load(change, disabled);
    return [];
  } catch (e) {
    if (e instanceof ConfigErrors) return e.all.map((f) => `${f.fieldPath}: ${f.reason}`);
    if (e instanceof ConfigError) return [`${e.fieldPath}: ${e.reason}`];
    throw e;
  }
}

const ALWAYS = { defaultValue: { numerator: 100, denominator: 'HUNDRED' }, runtimeKey: '' };
const NEVER = { defaultValue: { numerator: 0, denominator: 'HUNDRED' }, runtimeKey: '' };

test('entries on a virtual host, a route and a weighted cluster, by any name of their filter, become its models', () => {
  const hcm = load((b) => {
    virtualHostOf(b).typed_per_filter_config = { 'envoy.csrf': csrf(100), 'envoy.filters.http.local_ratelimit': rateLimit('vhost') };
    routeOf(b).typed_per_filter_config = { 'proxy.filters.http.csrf': csrf(0, { additional_origins: [{ suffix: '.example.com' }] }) };
    routeOf(b).route = {
      weighted_clusters: { clusters: [{ name: 'web:v1', weight: 100, typed_per_filter_config: { 'envoy.filters.http.csrf': csrf(100, { shadow_enabled: { default_value: {} } }) } }] },
    };
  });
  const virtualHost = hcm.routeConfig.virtualHosts[0]!;
  assert.deepEqual(virtualHost.perFilterConfig, {
    'proxy.filters.http.csrf': { filterEnabled: ALWAYS, additionalOrigins: [] },
    'proxy.filters.http.local_ratelimit': {
      statPrefix: 'vhost',
      status: 429,
      tokenBucket: { maxTokens: 5, tokensPerFill: 1, fillIntervalMs: 1000 },
      responseHeaders: [],
    },
  });
  const route = virtualHost.routes[1]!;
  assert.deepEqual(route.perFilterConfig, {
    'proxy.filters.http.csrf': { filterEnabled: NEVER, additionalOrigins: [{ kind: 'suffix', value: '.example.com', ignoreCase: false }] },
  });
  assert.ok(route.action.kind === 'route');
  assert.deepEqual(route.action.weightedClusters?.clusters[0]!.perFilterConfig, {
    'proxy.filters.http.csrf': { filterEnabled: ALWAYS, shadowEnabled: NEVER, additionalOrigins: [] },
  });
  // Levels without entries carry none.
  assert.equal(virtualHost.routes[0]!.perFilterConfig, undefined);
});

test('entries the filters cannot take are refused by field path', () => {
  const at = `${ROUTE_PATH}.typed_per_filter_config`;
  const cases: Array<[string, (b: Json) => void, string]> = [
    ['an unknown filter', (b) => (routeOf(b).typed_per_filter_config = { 'envoy.filters.http.lua': csrf(1) }), `${at}["envoy.filters.http.lua"]: Didn't find a registered implementation for name: 'envoy.filters.http.lua'`],
    [
      'a filter without per-route config',
      (b) => (routeOf(b).typed_per_filter_config = { 'envoy.health_check': { '@type': 'type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck', pass_through_mode: true } }),
      `${at}["envoy.health_check"]: the filter 'envoy.health_check' takes no per-route configuration in this build (it would be ignored)`,
    ],
    ['one filter under two names', (b) => (routeOf(b).typed_per_filter_config = { 'envoy.csrf': csrf(1), 'envoy.filters.http.csrf': csrf(2) }), `${at}["envoy.filters.http.csrf"]: 'envoy.filters.http.csrf' and 'envoy.csrf' name the same filter`],
    [
      'another filter type',
      (b) => (routeOf(b).typed_per_filter_config = { 'envoy.csrf': rateLimit('x') }),
      `${at}["envoy.csrf"].@type: expected type envoy.extensions.filters.http.csrf.v3.CsrfPolicy for envoy.csrf, got '${RATE_LIMIT_TYPE}'`,
    ],
    // An Any without a value is the type's default message, which the protos' rules refuse here.
    ['an empty CsrfPolicy', (b) => (virtualHostOf(b).typed_per_filter_config = { 'envoy.csrf': {} }), `${VHOST_PATH}.typed_per_filter_config["envoy.csrf"].filter_enabled: value is required`],
    ['a CsrfPolicy without filter_enabled', (b) => (routeOf(b).typed_per_filter_config = { 'envoy.csrf': { '@type': CSRF_TYPE } }), `${at}["envoy.csrf"].filter_enabled: value is required`],
    [
      'an origin regex that does not compile',
      (b) => (routeOf(b).typed_per_filter_config = { 'envoy.csrf': csrf(1, { additional_origins: [{ exact: 'a' }, { safe_regex: { google_re2: {}, regex: '(' } }] }) }),
      `${at}["envoy.csrf"].additional_origins[1].safe_regex.regex: invalid regex '(': missing closing )`,
    ],
    [
      'a route rate limit without a bucket',
      (b) => (routeOf(b).typed_per_filter_config = { 'envoy.filters.http.local_ratelimit': { '@type': RATE_LIMIT_TYPE, stat_prefix: 'r' } }),
      `${at}["envoy.filters.http.local_ratelimit"].token_bucket: local rate limit token bucket must be set for per filter configs`,
    ],
    [
      'a weighted cluster entry too',
      (b) => (routeOf(b).route = { weighted_clusters: { clusters: [{ name: 'web:v1', weight: 100, typed_per_filter_config: { 'envoy.csrf': {} } }] } }),
      `${ROUTE_PATH}.route.weighted_clusters.clusters[0].typed_per_filter_config["envoy.csrf"].filter_enabled: value is required`,
    ],
  ];
  for (const [what, change, refusal] of cases) assert.deepEqual(refusals(change), [refusal], what);
});

test('an entry for a filter --disable-extensions removed is refused as Envoy refuses an unregistered name', () => {
  const change = (b: Json) => {
    routeOf(b).route = { weighted_clusters: { clusters: [{ name: 'web:v1', weight: 100, typed_per_filter_config: { 'envoy.csrf': csrf(1) } }] } };
  };
  assert.deepEqual(refusals(change, ['envoy.filters.http/envoy.filters.http.csrf']), [
    `${ROUTE_PATH}.route.weighted_clusters.clusters[0].typed_per_filter_config["envoy.csrf"]: Didn't find a registered implementation for name: 'envoy.csrf' (disabled by --disable-extensions)`,
  ]);
  assert.deepEqual(refusals(change, ['envoy.filters.http/envoy.filters.http.local_ratelimit']), []);
});

test("fields of the filters' per-route configs that Envoy 1.16 lacks are refused by the capability check", () => {
  const refused = refusals((b) => {
    routeOf(b).typed_per_filter_config = { 'envoy.filters.http.local_ratelimit': rateLimit('r', { local_rate_limit_per_downstream_connection: true, stage: 2 }) };
    virtualHostOf(b).typed_per_filter_config = { 'envoy.csrf': csrf(1, { additional_origins: [{ exact: 'a', ignore_case: true }] }) };
  });
  const at = `${ROUTE_PATH}.typed_per_filter_config["envoy.filters.http.local_ratelimit"]`;
  assert.deepEqual(refused.sort(), [
    `${at}.local_rate_limit_per_downstream_connection: local_rate_limit_per_downstream_connection is not implemented by this build yet (it would be ignored)`,
    `${at}.stage: stage is not implemented by this build yet (it would be ignored)`,
  ]);
});

/** A loaded route configuration: a virtual host with a csrf entry and routes with and without their own. */
function routes(): RouteConfiguration {
  return load((b) => {
    const host = virtualHostOf(b);
    host.typed_per_filter_config = { 'envoy.csrf': csrf(1) };
    host.routes = [
      { name: 'redirect', match: { prefix: '/redirect' }, redirect: { path_redirect: '/' }, typed_per_filter_config: { 'envoy.csrf': csrf(2) } },
      { name: 'direct', match: { prefix: '/direct' }, direct_response: { status: 200 } },
      { name: 'plain', match: { prefix: '/plain' }, route: { cluster: 'web:v1' } },
      {
        name: 'weighted',
        match: { prefix: '/' },
        typed_per_filter_config: { 'envoy.csrf': csrf(3) },
        route: {
          weighted_clusters: {
            clusters: [
              { name: 'web:v1', weight: 50, typed_per_filter_config: { 'envoy.csrf': csrf(4) } },
              { name: 'backend', weight: 50 },
            ],
          },
        },
      },
    ];
  }).routeConfig;
}

test('the most specific entry: the weighted cluster, else the route, else (for a route to a cluster) the virtual host', () => {
  const config = routes();
  const virtualHost = config.virtualHosts[0]!;
  const named = (name: string): Route => virtualHost.routes.find((route) => route.name === name)!;
  const weighted = named('weighted');
  assert.ok(weighted.action.kind === 'route');
  const [ownEntry, plainEntry] = weighted.action.weightedClusters!.clusters;
  const numerator = (route: Route, weightedCluster = null as typeof ownEntry | null) =>
    mostSpecificPerFilterConfig({ route, virtualHost, weightedCluster }, 'proxy.filters.http.csrf')?.filterEnabled.defaultValue.numerator;
  assert.equal(numerator(weighted, ownEntry), 4);
  assert.equal(numerator(weighted, plainEntry), 3);
  assert.equal(numerator(named('plain')), 1);
  assert.equal(numerator(named('redirect')), 2);
  // Envoy's redirects and direct responses have no route entry, so no virtual host's config.
  assert.equal(numerator(named('direct')), undefined);
  assert.equal(mostSpecificPerFilterConfig({ route: named('plain'), virtualHost, weightedCluster: null }, 'proxy.filters.http.local_ratelimit'), undefined);
  assert.equal(mostSpecificPerFilterConfig(null, 'proxy.filters.http.csrf'), undefined);
});

test('every entry of a route configuration, for a filter to prepare once', () => {
  const numerators = perFilterConfigsOf(routes(), 'proxy.filters.http.csrf').map((policy) => policy.filterEnabled.defaultValue.numerator);
  assert.deepEqual(numerators, [1, 2, 3, 4]);
  assert.deepEqual(perFilterConfigsOf(routes(), 'proxy.filters.http.local_ratelimit'), []);
});

test('the chain of entries, least specific first, for a filter that merges them; none off a route to a cluster', () => {
  const config = routes();
  const virtualHost = config.virtualHosts[0]!;
  const named = (name: string): Route => virtualHost.routes.find((route) => route.name === name)!;
  const weighted = named('weighted');
  assert.ok(weighted.action.kind === 'route');
  const [ownEntry, plainEntry] = weighted.action.weightedClusters!.clusters;
  const chain = (route: Route, weightedCluster: typeof ownEntry | null) =>
    perFilterConfigChain({ route, virtualHost, weightedCluster }, 'proxy.filters.http.csrf').map((policy) => policy.filterEnabled.defaultValue.numerator);
  assert.deepEqual(chain(weighted, ownEntry!), [1, 3, 4]);
  assert.deepEqual(chain(weighted, plainEntry!), [1, 3]);
  assert.deepEqual(chain(named('plain'), null), [1]);
  assert.deepEqual(chain(named('redirect'), null), []);
  assert.deepEqual(perFilterConfigChain(null, 'proxy.filters.http.csrf'), []);
});
