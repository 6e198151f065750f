import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as yaml from 'js-yaml';
import { ConfigError } from '../../src/config/errors';
import { JsonObject } from '../../src/config/json';
import { loadBootstrap } from '../../src/config/load';
import { upgradeV2 } from '../../src/config/v2_upgrade';
import { Json, v2Bootstrap, v3Bootstrap } from '../helpers/config_fixtures';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const OPTIONS = { extensions: builtinExtensions(), allowUnknownStaticFields: false };

function load(bootstrap: Json, bootstrapVersion?: 2 | 3) {
  return loadBootstrap({ configYaml: yaml.dump(bootstrap), bootstrapVersion, ...OPTIONS });
}

test('a v2 bootstrap and its v3 rewrite load to the same model', () => {
  const v3 = load(v3Bootstrap());
  for (const version of [undefined, 2] as const) {
    const v2 = load(v2Bootstrap(), version);
    assert.deepEqual(v2.bootstrap, v3.bootstrap);
    assert.deepEqual(v2.warnings, [
      'static_resources.clusters[0].hosts: deprecated option, use load_assignment instead',
      'static_resources.clusters[0].tls_context: deprecated option, use transport_socket (proxy.transport_sockets.tls) instead',
    ]);
  }
  assert.deepEqual(v3.warnings, []);
});

test('--bootstrap-version 3 decodes the file as written, so v2 fields are unknown', () => {
  assert.throws(
    () => load(v2Bootstrap(), 3),
    new ConfigError('--config-yaml', 'static_resources.listeners[0].filter_chains[0].filters[0].config', 'unknown field'),
  );
});

test('when both attempts fail, the v3 error is reported', () => {
  const bootstrap = v3Bootstrap();
  bootstrap.static_resources.clusters[0].hosts = 'not a list';
  // The v2 attempt fails on `hosts: expected a list`; v3 does not know `hosts` at all.
  assert.throws(() => load(bootstrap), { message: '--config-yaml: static_resources.clusters[0].hosts: unknown field' });
  assert.throws(() => load(bootstrap, 2), { message: '--config-yaml: static_resources.clusters[0].hosts: expected a list' });
});

test('the upgrade is pure and leaves a v3 bootstrap as it is', () => {
  const v3 = v3Bootstrap();
  const { json, warnings } = upgradeV2(v3, builtinExtensions());
  assert.deepEqual({ json, warnings }, { json: v3Bootstrap(), warnings: [] });
  const v2 = v2Bootstrap();
  upgradeV2(v2, builtinExtensions());
  assert.deepEqual(v2, v2Bootstrap());
});

test('hosts become a load_assignment, unless one is given', () => {
  const cluster = { name: 'c', hosts: [{ socket_address: { address: '10.0.0.1', port_value: 80 } }] };
  assert.deepEqual(upgradeCluster(cluster)['load_assignment'], {
    cluster_name: 'c',
    endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '10.0.0.1', port_value: 80 } } } }] }],
  });
  const explicit = { cluster_name: 'c', endpoints: [] };
  assert.deepEqual(upgradeCluster({ ...cluster, load_assignment: explicit })['load_assignment'], explicit);
});

test('tls_context becomes a tls transport socket, unless a transport_socket is given', () => {
  assert.deepEqual(upgradeCluster({ name: 'c', tls_context: { sni: 'a' } })['transport_socket'], {
    name: 'proxy.transport_sockets.tls',
    typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', sni: 'a' },
  });
  const explicit = { name: 'envoy.transport_sockets.raw_buffer' };
  const upgraded = upgradeCluster({ name: 'c', tls_context: { sni: 'a' }, transport_socket: explicit });
  assert.deepEqual(upgraded['transport_socket'], explicit);
  assert.equal(upgraded['tls_context'], undefined);
});

test('v2 type URLs become v3 ones, in either package spelling', () => {
  for (const v2Type of [
    'envoy.config.filter.network.tcp_proxy.v2.TcpProxy',
    'proxy.config.filter.network.tcp_proxy.v2.TcpProxy',
  ]) {
    const bootstrap = { static_resources: { clusters: [{ name: 'c', typed_extension_protocol_options: { x: { '@type': `type.googleapis.com/${v2Type}` } } }] } };
    const upgraded = upgradeV2(bootstrap, builtinExtensions()).json as Json;
    assert.equal(
      upgraded.static_resources.clusters[0].typed_extension_protocol_options.x['@type'],
      'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
    );
  }
});

test('a v2 `config:` of an extension we cannot type is left for decoding to report', () => {
  const bootstrap = v3Bootstrap();
  bootstrap.static_resources.listeners[0].filter_chains[0].filters[0] = { name: 'envoy.redis_proxy', config: {} };
  assert.throws(() => load(bootstrap), {
    message: '--config-yaml: static_resources.listeners[0].filter_chains[0].filters[0].config: unknown field',
  });
});

function upgradeCluster(cluster: JsonObject): JsonObject {
  const upgraded = upgradeV2({ static_resources: { clusters: [cluster] } }, builtinExtensions()).json as Json;
  return upgraded.static_resources.clusters[0];
}

/** v2Bootstrap()'s route to web:v1, the one with host_rewrite, and its path. */
const V2_ROUTE = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[1]';
const v2Route = (bootstrap: Json): Json => bootstrap.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[1];

test('host_rewrite and auto_host_rewrite_header take their v3 names', () => {
  // host_rewrite -> host_rewrite_literal, which the router sends as the upstream's Host.
  const rewritten = load(v2Bootstrap());
  assert.equal(rewritten.bootstrap.listeners[1]!.filterChains[0]!.filters[0]!.kind, 'http_connection_manager');

  const bootstrap = v2Bootstrap();
  const action = v2Route(bootstrap).route;
  delete action.host_rewrite;
  action.auto_host_rewrite_header = 'x-upstream-host';
  assert.deepEqual((v2Route(upgradeV2(bootstrap, builtinExtensions()).json).route as JsonObject)['host_rewrite_header'], 'x-upstream-host');
  const hcm = load(bootstrap).bootstrap.listeners[1]!.filterChains[0]!.filters[0]!;
  assert.equal(hcm.kind === 'http_connection_manager' && hcm.routeConfig.virtualHosts[0]!.routes[1]!.action.kind === 'route' ? hcm.routeConfig.virtualHosts[0]!.routes[1]!.action.hostRewriteHeader : null, 'x-upstream-host');
});

test('a v2 request_mirror_policy is mirrored to first, before request_mirror_policies, with a warning', () => {
  const bootstrap = v2Bootstrap();
  const action = v2Route(bootstrap).route;
  action.request_mirror_policy = { cluster: 'backend' };
  action.request_mirror_policies = [{ cluster: 'web' }];
  const upgraded = upgradeV2(bootstrap, builtinExtensions());
  assert.deepEqual((v2Route(upgraded.json).route as JsonObject)['request_mirror_policies'], [{ cluster: 'backend' }, { cluster: 'web' }]);
  assert.ok(upgraded.warnings.includes(`${V2_ROUTE}.route.request_mirror_policy: deprecated option, use request_mirror_policies instead`));
  const hcm = load(bootstrap).bootstrap.listeners[1]!.filterChains[0]!.filters[0]!;
  const loaded = hcm.kind === 'http_connection_manager' ? hcm.routeConfig.virtualHosts[0]!.routes[1]!.action : null;
  assert.deepEqual(loaded?.kind === 'route' ? loaded.mirrorPolicies?.map((p) => p.cluster) : null, ['backend', 'web']);
});

test('v2 route fields v3 dropped are refused at their v2 path, even where unknown fields are allowed', () => {
  const cases: Array<[string, (route: Json) => void, string]> = [
    ['a v2 regex match', (route) => (route.match = { regex: '/a.*' }), `${V2_ROUTE}.match.regex: regex, deprecated in v2 and dropped from v3 (safe_regex replaces it)`],
  ];
  for (const [what, change, message] of cases) {
    const bootstrap = v2Bootstrap();
    change(v2Route(bootstrap));
    for (const allowUnknownStaticFields of [false, true]) {
      assert.throws(
        () => loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml.dump(bootstrap), allowUnknownStaticFields }),
        (error: unknown) => error instanceof ConfigError && error.message.startsWith(`--config-yaml: ${message}`) && error.message.endsWith('(it would be ignored)'),
        what,
      );
    }
  }
});

/** v2Bootstrap()'s virtual host, and its path. */
const V2_VHOST = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0]';
const v2VirtualHost = (bootstrap: Json): Json => bootstrap.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0];

test("a v2 virtual cluster's method becomes a :method header matcher after its own, with a warning", () => {
  const bootstrap = v2Bootstrap();
  const cluster = { name: 'post_users', headers: [{ name: ':path', prefix_match: '/users' }], method: 'post' };
  v2VirtualHost(bootstrap).virtual_clusters = [cluster, { name: 'by_number', headers: cluster.headers, method: 4 }, { name: 'any', headers: cluster.headers, method: 'METHOD_UNSPECIFIED' }];
  const upgraded = upgradeV2(bootstrap, builtinExtensions());
  assert.deepEqual(v2VirtualHost(upgraded.json).virtual_clusters, [
    { name: 'post_users', headers: [{ name: ':path', prefix_match: '/users' }, { name: ':method', exact_match: 'POST' }] },
    { name: 'by_number', headers: [{ name: ':path', prefix_match: '/users' }, { name: ':method', exact_match: 'PUT' }] },
    { name: 'any', headers: [{ name: ':path', prefix_match: '/users' }] },
  ]);
  assert.ok(upgraded.warnings.includes(`${V2_VHOST}.virtual_clusters[0].method: deprecated option, use headers (a :method matcher) instead`));
  const hcm = load(bootstrap).bootstrap.listeners[1]!.filterChains[0]!.filters[0]!;
  const loaded = hcm.kind === 'http_connection_manager' ? hcm.routeConfig.virtualHosts[0]!.virtualClusters : undefined;
  assert.deepEqual(loaded?.[0], {
    name: 'post_users',
    headers: [
      { name: ':path', invert: false, specifier: { kind: 'prefix', value: '/users' } },
      { name: ':method', invert: false, specifier: { kind: 'exact', value: 'POST' } },
    ],
  });
});

test("a v2 virtual cluster needs a pattern or headers of its own, method or not; its pattern (a std::regex) is refused", () => {
  const withCluster = (cluster: Json): Json => {
    const bootstrap = v2Bootstrap();
    v2VirtualHost(bootstrap).virtual_clusters = [cluster];
    return bootstrap;
  };
  // Envoy checks before it adds the method's matcher.
  assert.throws(() => load(withCluster({ name: 'gets', method: 'GET' }), 2), {
    message: `--config-yaml: ${V2_VHOST}.virtual_clusters[0]: virtual clusters must define either 'pattern' or 'headers'`,
  });
  assert.throws(() => load(withCluster({ name: 'gets', method: 'FETCH', headers: [{ name: 'x' }] }), 2), {
    message: `--config-yaml: ${V2_VHOST}.virtual_clusters[0].method: unknown enum value: "FETCH"`,
  });
  for (const allowUnknownStaticFields of [false, true]) {
    assert.throws(
      () => loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml.dump(withCluster({ name: 'rides', pattern: '/rides/\\d+', method: 'GET' })), allowUnknownStaticFields }),
      {
        message: `--config-yaml: ${V2_VHOST}.virtual_clusters[0].pattern: pattern, deprecated in v2 and dropped from v3 (headers replaces it), is not implemented by this build (it would be ignored)`,
      },
    );
  }
});

test("v2's connection manager idle_timeout moves to common_http_protocol_options, which wins when both are set", () => {
  const idleTimeoutOf = (bootstrap: Json): number => {
    const filter = load(bootstrap, 2).bootstrap.listeners[1].filterChains[0].filters[0];
    assert.ok(filter.kind === 'http_connection_manager');
    return filter.commonHttpProtocolOptions.idleTimeoutMs;
  };
  const alone = v2Bootstrap();
  alone.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.idle_timeout = '30s';
  assert.equal(idleTimeoutOf(alone), 30_000);
  assert.ok(load(alone, 2).warnings.includes('static_resources.listeners[1].filter_chains[0].filters[0].typed_config.idle_timeout: deprecated option, use common_http_protocol_options.idle_timeout instead'));
  const both = v2Bootstrap();
  both.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.idle_timeout = '30s';
  both.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.common_http_protocol_options = { idle_timeout: '5s' };
  assert.equal(idleTimeoutOf(both), 5_000);
});

test("a v2 CORS policy's allow_origin become exact matches first and `enabled` a fixed filter_enabled; allow_origin_regex is refused", () => {
  const bootstrap = v2Bootstrap();
  v2VirtualHost(bootstrap).cors = { allow_origin: ['https://a.example'], allow_origin_string_match: [{ suffix: '.b.example' }], enabled: false, allow_methods: 'GET' };
  const upgraded = upgradeV2(bootstrap, builtinExtensions());
  assert.deepEqual(v2VirtualHost(upgraded.json).cors, {
    allow_origin_string_match: [{ exact: 'https://a.example' }, { suffix: '.b.example' }],
    allow_methods: 'GET',
    filter_enabled: { default_value: { numerator: 0, denominator: 'HUNDRED' } },
  });
  assert.ok(upgraded.warnings.includes(`${V2_VHOST}.cors.allow_origin: deprecated option, use allow_origin_string_match instead`));
  assert.ok(upgraded.warnings.includes(`${V2_VHOST}.cors.enabled: deprecated option, use filter_enabled instead`));
  const hcm = load(bootstrap).bootstrap.listeners[1]!.filterChains[0]!.filters[0]!;
  const cors = hcm.kind === 'http_connection_manager' ? hcm.routeConfig.virtualHosts[0]!.cors : undefined;
  assert.deepEqual(cors?.allowOrigins.map((m) => [m.kind, m.value]), [['exact', 'https://a.example'], ['suffix', '.b.example']]);
  assert.equal(cors?.filterEnabled?.defaultValue.numerator, 0);

  const regex = v2Bootstrap();
  v2VirtualHost(regex).cors = { allow_origin_regex: ['https://.*'] };
  assert.throws(() => load(regex, 2), {
    message: `--config-yaml: ${V2_VHOST}.cors.allow_origin_regex: allow_origin_regex, deprecated in v2 and dropped from v3 (allow_origin_string_match replaces it), is not implemented by this build (it would be ignored)`,
  });
});

test("v2 per_filter_config Structs become typed_per_filter_config entries of each filter's per-route type", () => {
  const policy = { filter_enabled: { default_value: { numerator: 100 } } };
  const bootstrap = v2Bootstrap();
  v2VirtualHost(bootstrap).per_filter_config = { 'envoy.csrf': policy };
  v2Route(bootstrap).per_filter_config = { 'envoy.filters.http.csrf': { ...policy, shadow_enabled: policy.filter_enabled } };
  const upgraded = upgradeV2(bootstrap, builtinExtensions());
  const csrfPolicy = { '@type': 'type.googleapis.com/envoy.extensions.filters.http.csrf.v3.CsrfPolicy', ...policy };
  assert.deepEqual(v2VirtualHost(upgraded.json).typed_per_filter_config, { 'envoy.csrf': csrfPolicy });
  assert.deepEqual(v2Route(upgraded.json).typed_per_filter_config, { 'envoy.filters.http.csrf': { ...csrfPolicy, shadow_enabled: policy.filter_enabled } });
  assert.ok(upgraded.warnings.includes(`${V2_VHOST}.per_filter_config: deprecated option, use typed_per_filter_config instead`));
  const hcm = load(bootstrap).bootstrap.listeners[1]!.filterChains[0]!.filters[0]!;
  assert.ok(hcm.kind === 'http_connection_manager');
  const always = { defaultValue: { numerator: 100, denominator: 'HUNDRED' }, runtimeKey: '' };
  assert.deepEqual(hcm.routeConfig.virtualHosts[0]!.perFilterConfig, { 'proxy.filters.http.csrf': { filterEnabled: always, additionalOrigins: [] } });
  assert.deepEqual(hcm.routeConfig.virtualHosts[0]!.routes[1]!.perFilterConfig, { 'proxy.filters.http.csrf': { filterEnabled: always, shadowEnabled: always, additionalOrigins: [] } });
});

test('v2 per_filter_config that Envoy would refuse or this build would ignore is refused at its v2 path, even where unknown fields are allowed', () => {
  const typed = { 'envoy.filters.http.csrf': { '@type': 'type.googleapis.com/envoy.extensions.filters.http.csrf.v3.CsrfPolicy', filter_enabled: { default_value: {} } } };
  const cases: Array<[string, (route: Json) => void, string]> = [
    ['a filter without per-route config', (route) => (route.per_filter_config = { 'envoy.router': {} }), `${V2_ROUTE}.per_filter_config["envoy.router"]: the filter 'envoy.router' takes no per-route configuration in this build (it would be ignored)`],
    ['an unknown filter', (route) => (route.per_filter_config = { 'envoy.lua': {} }), `${V2_ROUTE}.per_filter_config["envoy.lua"]: Didn't find a registered implementation for name: 'envoy.lua'`],
    [
      'both kinds on one route',
      (route) => Object.assign(route, { per_filter_config: { 'envoy.csrf': {} }, typed_per_filter_config: typed }),
      `${V2_ROUTE}.per_filter_config: Only one of typed_configs or configs can be specified`,
    ],
    [
      'a weighted cluster per_filter_config',
      (route) => (route.route = { weighted_clusters: { clusters: { name: 'backend', weight: 100, per_filter_config: { 'envoy.router': {} } } } }),
      `${V2_ROUTE}.route.weighted_clusters.clusters[0].per_filter_config["envoy.router"]: the filter 'envoy.router' takes no per-route configuration in this build (it would be ignored)`,
    ],
  ];
  for (const [what, change, message] of cases) {
    const bootstrap = v2Bootstrap();
    change(v2Route(bootstrap));
    for (const allowUnknownStaticFields of [false, true]) {
      assert.throws(() => loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml.dump(bootstrap), allowUnknownStaticFields }), { message: `--config-yaml: ${message}` }, what);
    }
  }
});

test("a v2 StringMatcher's regex, wherever it sits, is read as the safe_regex v3 has for it", () => {
  const bootstrap = v2Bootstrap();
  const hcm = bootstrap.static_resources.listeners[1].filter_chains[0].filters[0];
  const config = hcm.typed_config ?? hcm.config;
  config.route_config.virtual_hosts[0].cors = { allow_origin_string_match: [{ regex: 'https://.*\\.example' }] };
  const loaded = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
  const listener = loaded.bootstrap.listeners[1]!.filterChains[0]!.filters[0]!;
  assert.ok(listener.kind === 'http_connection_manager');
  assert.deepEqual(listener.routeConfig.virtualHosts[0]!.cors?.allowOrigins, [{ kind: 'safe_regex', value: 'https://.*\\.example', ignoreCase: false }]);
  assert.ok(loaded.warnings.some((w) => w.endsWith('allow_origin_string_match[0].regex: deprecated option, use safe_regex instead')), loaded.warnings.join('\n'));
  // What RE2 cannot compile is refused by path.
  config.route_config.virtual_hosts[0].cors = { allow_origin_string_match: [{ regex: '(a)\\1' }] };
  assert.throws(
    () => loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false }),
    (e: unknown) => e instanceof Error && /allow_origin_string_match\[0\]\.safe_regex\.regex/.test(e.message),
  );
});
