import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import type { ClusterRouteAction } from '../../src/config/model';
import { metadataMatchCriteria } from '../../src/config/metadata_match';
import { Json, v3Bootstrap } from '../helpers/config_fixtures';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const HCM = 'static_resources.listeners[1].filter_chains[0].filters[0]';
const ROUTE = `${HCM}.typed_config.route_config.virtual_hosts[0].routes[1].route`;

const routeOf = (b: Json): Json => b.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[1];

/**
 * The fixture with its second route's action replaced, and without the settings of its clusters
 * this build refuses, so that the capability check looks at the route alone.
 */
function withAction(action: Json): Json {
  const bootstrap = v3Bootstrap();
  routeOf(bootstrap).route = action;
  for (const cluster of bootstrap.static_resources.clusters) {
    cluster.lb_policy = 'ROUND_ROBIN';
    delete cluster.transport_socket;
  }
  return bootstrap;
}

function load(bootstrap: Json) {
  return loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), bootstrapVersion: 3, allowUnknownStaticFields: false });
}

function actionOf(bootstrap: Json): ClusterRouteAction {
  const loaded = load(bootstrap);
  const filter = loaded.bootstrap.listeners[1].filterChains[0].filters[0];
  assert.ok(filter.kind === 'http_connection_manager');
  const action = filter.routeConfig.virtualHosts[0].routes[1].action;
  assert.ok(action.kind === 'route');
  return action;
}

function loadError(bootstrap: Json): string {
  try {
    load(bootstrap);
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e.message;
  }
  assert.fail('the configuration loaded');
}

test('metadata criteria: sorted by name, a child field replacing the parent one of the same name', () => {
  const parent = metadataMatchCriteria({ version: 'v1', stage: 'prod' });
  assert.deepEqual(parent, [
    { name: 'stage', value: 'prod' },
    { name: 'version', value: 'v1' },
  ]);
  assert.deepEqual(metadataMatchCriteria({ version: 'v2', canary: true }, parent), [
    { name: 'canary', value: true },
    { name: 'stage', value: 'prod' },
    { name: 'version', value: 'v2' },
  ]);
  assert.deepEqual(metadataMatchCriteria({}), []);
});

test('hash policies: each kind, in order, with terminal; connection_properties without source_ip is none', () => {
  const action = actionOf(
    withAction({
      cluster: 'web:v1',
      hash_policy: [
        { header: { header_name: 'X-User' } },
        { cookie: { name: 'sticky', ttl: '3600.9s', path: '/app' }, terminal: true },
        { cookie: { name: 'session' } },
        { cookie: { name: 'zero', ttl: '0s' } },
        { connection_properties: { source_ip: true } },
        { connection_properties: { source_ip: false }, terminal: true },
        { query_parameter: { name: 'user' } },
        { filter_state: { key: 'proxy.hash' } },
      ],
    }),
  );
  assert.deepEqual(action.hashPolicies, [
    { kind: 'header', name: 'x-user', terminal: false },
    { kind: 'cookie', name: 'sticky', ttlSeconds: 3600, path: '/app', terminal: true },
    { kind: 'cookie', name: 'session', ttlSeconds: null, path: '', terminal: false },
    { kind: 'cookie', name: 'zero', ttlSeconds: 0, path: '', terminal: false },
    { kind: 'source_ip', terminal: false },
    { kind: 'query_parameter', name: 'user', terminal: false },
    { kind: 'filter_state', key: 'proxy.hash', terminal: false },
  ]);
  assert.equal(action.metadataMatch, undefined);
  assert.equal(action.weightedClusters, undefined);
});

test('a route without hash policies or metadata_match carries neither', () => {
  const action = actionOf(withAction({ cluster: 'web:v1', hash_policy: [{ connection_properties: { source_ip: false } }] }));
  assert.deepEqual(action, { kind: 'route', cluster: 'web:v1', timeoutMs: 15000, priority: 'DEFAULT' });
});

test('metadata_match: envoy.lb and proxy.lb are the criteria, other namespaces are not', () => {
  const envoy = actionOf(withAction({ cluster: 'web:v1', metadata_match: { filter_metadata: { 'envoy.lb': { version: 'v1', az: 'a' }, other: { x: 1 } } } }));
  assert.deepEqual(envoy.metadataMatch, [
    { name: 'az', value: 'a' },
    { name: 'version', value: 'v1' },
  ]);
  const proxy = actionOf(withAction({ cluster: 'web:v1', metadata_match: { filter_metadata: { 'proxy.lb': { n: 2 } } } }));
  assert.deepEqual(proxy.metadataMatch, [{ name: 'n', value: 2 }]);
  const none = actionOf(withAction({ cluster: 'web:v1', metadata_match: { filter_metadata: { other: { x: 1 } } } }));
  assert.equal(none.metadataMatch, undefined);
});

test('weighted_clusters: entries with runtime keys, criteria merged over the route, total_weight 100 by default', () => {
  const action = actionOf(
    withAction({
      weighted_clusters: {
        runtime_key_prefix: 'routing.web',
        clusters: [
          { name: 'web:v1', weight: 70, metadata_match: { filter_metadata: { 'envoy.lb': { version: 'v1', canary: false } } } },
          { name: 'backend', weight: 30 },
        ],
      },
      metadata_match: { filter_metadata: { 'envoy.lb': { version: 'any', stage: 'prod' } } },
    }),
  );
  assert.equal(action.cluster, '');
  assert.deepEqual(action.weightedClusters, {
    totalWeight: 100,
    clusters: [
      {
        name: 'web:v1',
        weight: 70,
        runtimeKey: 'routing.web.web:v1',
        metadataMatch: [
          { name: 'canary', value: false },
          { name: 'stage', value: 'prod' },
          { name: 'version', value: 'v1' },
        ],
      },
      {
        name: 'backend',
        weight: 30,
        runtimeKey: 'routing.web.backend',
        metadataMatch: [
          { name: 'stage', value: 'prod' },
          { name: 'version', value: 'any' },
        ],
      },
    ],
  });
});

test('weighted_clusters without a runtime_key_prefix: keys as Envoy builds them, total_weight as configured', () => {
  const action = actionOf(withAction({ weighted_clusters: { total_weight: 10, clusters: [{ name: 'web:v1', weight: 10 }] } }));
  assert.deepEqual(action.weightedClusters, { totalWeight: 10, clusters: [{ name: 'web:v1', weight: 10, runtimeKey: '.web:v1' }] });
});

const ERRORS: [string, Json, string][] = [
  [
    'weights that do not add up',
    { weighted_clusters: { clusters: [{ name: 'web:v1', weight: 60 }, { name: 'backend', weight: 30 }] } },
    `${ROUTE}.weighted_clusters: Sum of weights in the weighted_cluster should add up to 100`,
  ],
  [
    'weights that do not add up to total_weight',
    { weighted_clusters: { total_weight: 5, clusters: [{ name: 'web:v1', weight: 6 }] } },
    `${ROUTE}.weighted_clusters: Sum of weights in the weighted_cluster should add up to 5`,
  ],
  [
    'an unknown weighted cluster',
    { weighted_clusters: { clusters: [{ name: 'web:v1', weight: 50 }, { name: 'nowhere', weight: 50 }] } },
    `${ROUTE}.weighted_clusters.clusters[1].name: route: unknown weighted cluster 'nowhere'`,
  ],
  ['a weight left out', { weighted_clusters: { clusters: [{ name: 'web:v1' }] } }, `${ROUTE}.weighted_clusters.clusters[0].weight: Field 'weight' is missing`],
  ['no weighted entries', { weighted_clusters: { clusters: [] } }, `${ROUTE}.weighted_clusters.clusters: value must contain at least 1 item(s)`],
  ['total_weight 0', { weighted_clusters: { total_weight: 0, clusters: [{ name: 'web:v1', weight: 0 }] } }, `${ROUTE}.weighted_clusters.total_weight: value must be greater than or equal to 1`],
  ['a hash policy of no kind', { cluster: 'web:v1', hash_policy: [{ terminal: true }] }, `${ROUTE}.hash_policy[0].policy_specifier: is required: set one of header, cookie, connection_properties, query_parameter, filter_state`],
  ['an empty header name', { cluster: 'web:v1', hash_policy: [{ header: { header_name: '' } }] }, `${ROUTE}.hash_policy[0].header.header_name: value length must be at least 1 runes`],
  ['an empty cookie name', { cluster: 'web:v1', hash_policy: [{ cookie: { name: '' } }] }, `${ROUTE}.hash_policy[0].cookie.name: value length must be at least 1 runes`],
  [
    'a cookie path that would break the Set-Cookie header',
    { cluster: 'web:v1', hash_policy: [{ header: { header_name: 'x' } }, { cookie: { name: 's', ttl: '1s', path: '/\r\nx-injected: 1' } }] },
    `${ROUTE}.hash_policy[1].cookie.path: must not contain control characters (it goes into a Set-Cookie header)`,
  ],
  // Refused by the capability check: fields the router would not act on.
  [
    'header regex_rewrite',
    { cluster: 'web:v1', hash_policy: [{ header: { header_name: 'x', regex_rewrite: { pattern: { regex: 'a' }, substitution: 'b' } } }] },
    `${ROUTE}.hash_policy[0].header.regex_rewrite: regex_rewrite is not implemented by this build yet (it would be ignored)`,
  ],
  [
    'a per-entry config for a filter that reads none',
    { weighted_clusters: { clusters: [{ name: 'web:v1', weight: 100, typed_per_filter_config: { 'envoy.filters.http.router': { '@type': 'type.googleapis.com/google.protobuf.Struct', value: {} } } }] } },
    `${ROUTE}.weighted_clusters.clusters[0].typed_per_filter_config["envoy.filters.http.router"]: the filter 'envoy.filters.http.router' takes no per-route configuration in this build (it would be ignored)`,
  ],
  [
    'per-entry removal of a pseudo-header',
    { weighted_clusters: { clusters: [{ name: 'web:v1', weight: 100, request_headers_to_remove: ['x', ':path'] }] } },
    `${ROUTE}.weighted_clusters.clusters[0].request_headers_to_remove[1]: :-prefixed or host headers may not be removed`,
  ],
  [
    'typed_filter_metadata in metadata_match',
    { cluster: 'web:v1', metadata_match: { typed_filter_metadata: { 'envoy.lb': { '@type': 'type.googleapis.com/google.protobuf.Struct', value: { a: 1 } } } } },
    `${ROUTE}.metadata_match.typed_filter_metadata: typed_filter_metadata is not implemented by this build yet (it would be ignored)`,
  ],
];

test('invalid or unsupported load balancing settings on a route, each by field path', () => {
  for (const [name, action, error] of ERRORS) {
    let message: string;
    try {
      message = loadError(withAction(action));
    } catch (e) {
      throw new Error(`${name}: ${String(e)}`);
    }
    assert.equal(message, `--config-yaml: ${error}`, name);
  }
});
