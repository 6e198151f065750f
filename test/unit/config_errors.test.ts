import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import { Json, v3Bootstrap } from '../helpers/config_fixtures';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const TCP = 'static_resources.listeners[0].filter_chains[0].filters[0]';
const HCM = 'static_resources.listeners[1].filter_chains[0].filters[0]';
const ROUTES = `${HCM}.typed_config.route_config.virtual_hosts[0].routes`;
const BACKEND = 'static_resources.clusters[0]';
const WEB = 'static_resources.clusters[1]';
const WEB_ENDPOINT = `${WEB}.load_assignment.endpoints[0].lb_endpoints[0]`;

interface Case {
  readonly name: string;
  readonly change: (bootstrap: Json) => void;
  /** The whole message after `--config-yaml: `. */
  readonly error: string;
}

const tcpProxy = (b: Json): Json => b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
const hcm = (b: Json): Json => b.static_resources.listeners[1].filter_chains[0].filters[0].typed_config;
const routes = (b: Json): Json => hcm(b).route_config.virtual_hosts[0].routes;
const backend = (b: Json): Json => b.static_resources.clusters[0];
const web = (b: Json): Json => b.static_resources.clusters[1];
const webEndpoint = (b: Json): Json => web(b).load_assignment.endpoints[0].lb_endpoints[0];

const CASES: Case[] = [
  // Decoding: types, enums, durations, oneofs.
  { name: 'wrong type', change: (b) => (b.node.id = 5), error: 'node.id: expected string: 5' },
  { name: 'object expected', change: (b) => (b.admin = 'x'), error: 'admin: expected an object, got "x"' },
  // A single object there is a list of one (Envoy's parser reads it so); a scalar is neither.
  { name: 'element expected', change: (b) => (b.static_resources.clusters = 'backend'), error: 'static_resources.clusters: expected an object, got "backend"' },
  { name: 'list for a singular field', change: (b) => (b.admin = [b.admin]), error: 'admin: expected an object, got a list' },
  { name: 'bad duration', change: (b) => (backend(b).connect_timeout = '5 s'), error: `${BACKEND}.connect_timeout: invalid duration: "5 s"` },
  { name: 'duration as number', change: (b) => (backend(b).connect_timeout = 5), error: `${BACKEND}.connect_timeout: expected duration string: 5` },
  { name: 'invalid enum name', change: (b) => (backend(b).lb_policy = 'FASTEST'), error: `${BACKEND}.lb_policy: unknown enum value: "FASTEST"` },
  { name: 'invalid enum number', change: (b) => (backend(b).type = 9), error: `${BACKEND}.type: unknown enum value: 9` },
  { name: 'uint32 out of range', change: (b) => (webEndpoint(b).endpoint.address.socket_address.port_value = -1), error: `${WEB_ENDPOINT}.endpoint.address.socket_address.port_value: out of range for uint32: -1` },
  { name: 'unknown field', change: (b) => (web(b).colour = 'blue'), error: `${WEB}.colour: unknown field` },
  { name: 'same field twice', change: (b) => (web(b).altStatName = 'x'), error: `${WEB}.altStatName: duplicate field 'alt_stat_name'` },
  { name: 'unknown Any type', change: (b) => (tcpProxy(b)['@type'] = 'type.googleapis.com/envoy.Nope'), error: `${TCP}.typed_config.@type: unknown type 'type.googleapis.com/envoy.Nope'` },
  { name: 'type and cluster_type', change: (b) => (web(b).cluster_type = { name: 'custom' }), error: `${WEB}: only one of type, cluster_type may be set` },
  {
    name: 'zone aware and locality weighted',
    change: (b) => (web(b).common_lb_config = { zone_aware_lb_config: {}, locality_weighted_lb_config: {} }),
    error: `${WEB}.common_lb_config: only one of zone_aware_lb_config, locality_weighted_lb_config may be set`,
  },
  {
    name: 'two lb configs',
    change: (b) => Object.assign(web(b), { ring_hash_lb_config: {}, least_request_lb_config: {} }),
    error: `${WEB}: only one of ring_hash_lb_config, least_request_lb_config may be set`,
  },

  // Durations: none negative (Envoy's DurationUtil, PGV `gte`), connect_timeout above zero (PGV `gt`).
  { name: 'negative route timeout', change: (b) => (routes(b)[1].route.timeout = '-5s'), error: `${ROUTES}[1].route.timeout: must not be negative, got -5s` },
  { name: 'zero connect_timeout', change: (b) => (backend(b).connect_timeout = '0s'), error: `${BACKEND}.connect_timeout: value must be greater than 0s` },
  { name: 'negative connect_timeout', change: (b) => (backend(b).connect_timeout = '-0.000000001s'), error: `${BACKEND}.connect_timeout: value must be greater than 0s` },
  { name: 'negative tcp_proxy idle_timeout', change: (b) => (tcpProxy(b).idle_timeout = '-1s'), error: `${TCP}.typed_config.idle_timeout: must not be negative, got -1s` },
  { name: 'negative stream_idle_timeout', change: (b) => (hcm(b).stream_idle_timeout = '-0.5s'), error: `${HCM}.typed_config.stream_idle_timeout: must not be negative, got -0.500s` },
  { name: 'negative request_timeout', change: (b) => (hcm(b).request_timeout = '-60s'), error: `${HCM}.typed_config.request_timeout: must not be negative, got -60s` },
  // stats_flush_interval: PGV `gte: 1ms, lt: 300s`.
  { name: 'stats_flush_interval below 1ms', change: (b) => (b.stats_flush_interval = '0.000999s'), error: 'stats_flush_interval: value must be inside range [1ms, 5m0s)' },
  { name: 'stats_flush_interval of 5 minutes', change: (b) => (b.stats_flush_interval = '300s'), error: 'stats_flush_interval: value must be inside range [1ms, 5m0s)' },
  { name: 'negative stats_flush_interval', change: (b) => (b.stats_flush_interval = '-5s'), error: 'stats_flush_interval: value must be inside range [1ms, 5m0s)' },
  {
    name: 'negative connection idle_timeout',
    change: (b) => (hcm(b).common_http_protocol_options = { idle_timeout: '-1s' }),
    error: `${HCM}.typed_config.common_http_protocol_options.idle_timeout: must not be negative, got -1s`,
  },

  // Admin.
  { name: 'admin without access log', change: (b) => delete b.admin.access_log_path, error: 'admin.access_log_path: An admin access log path is required for a listening server.' },
  { name: 'admin on a hostname', change: (b) => (b.admin.address.socket_address.address = 'localhost'), error: 'admin.address.socket_address.address: malformed IP address: localhost' },

  // Listeners and network filters.
  { name: 'duplicate listener', change: (b) => (b.static_resources.listeners[1].name = 'tcp_in'), error: `static_resources.listeners[1].name: duplicate listener name 'tcp_in'` },
  { name: 'listener port', change: (b) => (b.static_resources.listeners[0].address.socket_address.port_value = 65536), error: 'static_resources.listeners[0].address.socket_address.port_value: value must be less than or equal to 65535' },
  { name: 'listener without address', change: (b) => delete b.static_resources.listeners[0].address, error: 'static_resources.listeners[0].address: missing required field' },
  { name: 'pipe address', change: (b) => (b.static_resources.listeners[0].address = { pipe: { path: '/tmp/x' } }), error: 'static_resources.listeners[0].address.pipe: pipe addresses are not supported; use socket_address' },
  { name: 'connection balancing of no type', change: (b) => (b.static_resources.listeners[0].connection_balance_config = {}), error: 'static_resources.listeners[0].connection_balance_config.balance_type: is required: set one of exact_balance, extend_balance' },
  { name: 'no filter chain', change: (b) => (b.static_resources.listeners[0].filter_chains = []), error: 'static_resources.listeners[0].filter_chains: no filter chains specified' },
  {
    name: 'empty filter chain',
    change: (b) => (b.static_resources.listeners[0].filter_chains[0].filters = []),
    error: 'static_resources.listeners[0].filter_chains[0].filters: a filter chain needs a terminal filter: proxy.filters.network.tcp_proxy or proxy.filters.network.http_connection_manager',
  },
  {
    name: 'unknown network filter',
    change: (b) => (b.static_resources.listeners[0].filter_chains[0].filters[0] = { name: 'envoy.filters.network.redis_proxy' }),
    error: `${TCP}.name: Didn't find a registered implementation for name: 'proxy.filters.network.redis_proxy'`,
  },
  {
    name: 'terminal filter not last',
    change: (b) => b.static_resources.listeners[0].filter_chains[0].filters.push(b.static_resources.listeners[1].filter_chains[0].filters[0]),
    error: `${TCP}.name: terminal filter named proxy.filters.network.tcp_proxy must be the last filter in a network filter chain`,
  },
  {
    name: 'typed_config of another filter',
    change: (b) => (b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config = hcm(b)),
    error: `${TCP}.typed_config.@type: expected type envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy for proxy.filters.network.tcp_proxy, got 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager'`,
  },
  {
    name: 'listener filter',
    change: (b) => (b.static_resources.listeners[0].listener_filters = [{ name: 'envoy.listener.tls_inspector' }, { name: 'envoy.filters.listener.http_inspector' }]),
    error: `static_resources.listeners[0].listener_filters[1].name: Didn't find a registered implementation for name: 'proxy.filters.listener.http_inspector'`,
  },

  // TCP proxy.
  { name: 'tcp_proxy stat_prefix', change: (b) => delete tcpProxy(b).stat_prefix, error: `${TCP}.typed_config.stat_prefix: value length must be at least 1 runes` },
  { name: 'tcp_proxy cluster', change: (b) => delete tcpProxy(b).cluster, error: `${TCP}.typed_config.cluster_specifier: is required: set one of cluster, weighted_clusters` },
  { name: 'tcp_proxy unknown cluster', change: (b) => (tcpProxy(b).cluster = 'nowhere'), error: `${TCP}.typed_config.cluster: tcp_proxy: unknown cluster 'nowhere'` },
  {
    name: 'tcp_proxy weighted clusters',
    change: (b) => {
      delete tcpProxy(b).cluster;
      tcpProxy(b).weighted_clusters = { clusters: [{ name: 'backend', weight: 1 }] };
    },
    error: `${TCP}.typed_config.weighted_clusters: weighted_clusters is not supported yet; use cluster`,
  },

  // HTTP connection manager and routes.
  { name: 'hcm stat_prefix', change: (b) => delete hcm(b).stat_prefix, error: `${HCM}.typed_config.stat_prefix: value length must be at least 1 runes` },
  { name: 'hcm without routes', change: (b) => delete hcm(b).route_config, error: `${HCM}.typed_config.route_specifier: is required: set one of rds, route_config, scoped_routes` },
  {
    name: 'hcm with rds over ADS without ads_config',
    change: (b) => {
      delete hcm(b).route_config;
      hcm(b).rds = { route_config_name: 'r', config_source: { ads: {} } };
    },
    error: `${HCM}.typed_config.rds.config_source.ads: ADS must be configured to support an ADS config source`,
  },
  { name: 'route to an unknown cluster', change: (b) => (routes(b)[1].route.cluster = 'nowhere'), error: `${ROUTES}[1].route.cluster: route: unknown cluster 'nowhere'` },
  {
    name: 'prefix_rewrite and regex_rewrite',
    change: (b) => Object.assign(routes(b)[1].route, { prefix_rewrite: '/a', regex_rewrite: { pattern: { google_re2: {}, regex: 'a' }, substitution: 'b' } }),
    error: `${ROUTES}[1].route.regex_rewrite: Cannot specify both prefix_rewrite and regex_rewrite`,
  },
  {
    name: 'a rewrite asking for a group the pattern lacks',
    change: (b) => (routes(b)[1].route.regex_rewrite = { pattern: { google_re2: {}, regex: '^/(a)' }, substitution: '\\2' }),
    error: `${ROUTES}[1].route.regex_rewrite.substitution: Rewrite schema requests 2 matches, but the regexp only has 1 parenthesized subexpressions.`,
  },
  {
    name: 'an invalid host_rewrite_path_regex pattern',
    change: (b) => {
      delete routes(b)[1].route.host_rewrite_literal;
      routes(b)[1].route.host_rewrite_path_regex = { pattern: { google_re2: {}, regex: '(' }, substitution: 'x' };
    },
    error: `${ROUTES}[1].route.host_rewrite_path_regex.pattern.regex: invalid regex '(': missing closing )`,
  },
  { name: 'a mirror without a cluster', change: (b) => (routes(b)[1].route.request_mirror_policies = [{ cluster: '' }]), error: `${ROUTES}[1].route.request_mirror_policies[0].cluster: missing required field` },
  {
    name: 'a CORS origin regex that does not compile',
    change: (b) => (routes(b)[1].route.cors = { allow_origin_string_match: [{ safe_regex: { google_re2: {}, regex: '(' } }] }),
    error: `${ROUTES}[1].route.cors.allow_origin_string_match[0].safe_regex.regex: invalid regex '(': missing closing )`,
  },
  {
    name: 'a connect_config on an upgrade other than CONNECT',
    change: (b) => (routes(b)[1].route.upgrade_configs = [{ upgrade_type: 'websocket', connect_config: {} }]),
    error: `${ROUTES}[1].route.upgrade_configs[0].connect_config: Non-CONNECT upgrade type websocket has ConnectConfig`,
  },
  { name: 'a connect_config on the connection manager', change: (b) => (hcm(b).upgrade_configs = [{ upgrade_type: 'CONNECT', connect_config: {} }]), error: `${HCM}.typed_config.upgrade_configs[0].connect_config: unknown field` },
  {
    name: 'an upgrade type twice on the connection manager',
    change: (b) => (hcm(b).upgrade_configs = [{ upgrade_type: 'websocket' }, { upgrade_type: 'WebSocket' }]),
    error: `${HCM}.typed_config.upgrade_configs[1].upgrade_type: Error: multiple upgrade configs with the same name: 'websocket'`,
  },
  { name: 'an upgrade type twice on a route', change: (b) => (routes(b)[1].route.upgrade_configs = [{ upgrade_type: 'a' }, { upgrade_type: 'a' }]), error: `${ROUTES}[1].route.upgrade_configs[1].upgrade_type: Duplicate upgrade a` },
  { name: 'an upgrade filter chain', change: (b) => (hcm(b).upgrade_configs = [{ upgrade_type: 'websocket', filters: [{ name: 'proxy.filters.http.router' }] }]), error: `${HCM}.typed_config.upgrade_configs[0].filters: filters is not implemented by this build yet (it would be ignored)` },
  { name: 'route with a cluster header that is no header name', change: (b) => (routes(b)[1].route = { cluster_header: 'x\tcluster' }), error: `${ROUTES}[1].route.cluster_header: must be a header name (no control characters)` },
  { name: 'route without match', change: (b) => delete routes(b)[1].match, error: `${ROUTES}[1].match: value is required` },
  {
    name: 'regex match',
    change: (b) => (routes(b)[1].match = { safe_regex: { google_re2: {}, regex: '/a(' } }),
    error: `${ROUTES}[1].match.safe_regex.regex: invalid regex '/a(': missing closing )`,
  },
  {
    name: 'header match regex',
    change: (b) => (routes(b)[1].match = { prefix: '/', headers: [{ name: 'x', exact_match: 'y' }, { name: 'z', safe_regex_match: { google_re2: {}, regex: 'b(' } }] }),
    error: `${ROUTES}[1].match.headers[1].safe_regex_match.regex: invalid regex 'b(': missing closing )`,
  },
  {
    name: 'query parameter regex',
    change: (b) => (routes(b)[1].match = { prefix: '/', query_parameters: [{ name: 'q', string_match: { safe_regex: { google_re2: {}, regex: 'c(' } } }] }),
    error: `${ROUTES}[1].match.query_parameters[0].string_match.safe_regex.regex: invalid regex 'c(': missing closing )`,
  },
  {
    name: 'a pseudo-header to add',
    change: (b) => (routes(b)[1].request_headers_to_add = [{ header: { key: ':path', value: '/x' } }]),
    error: `${ROUTES}[1].request_headers_to_add[0].header.key: :-prefixed headers may not be modified`,
  },
  {
    name: 'a header value Envoy would refuse',
    change: (b) => (routes(b)[1].response_headers_to_add = [{ header: { key: 'x-a', value: 'ok' } }, { header: { key: 'x-b', value: '50%' } }]),
    error: `${ROUTES}[1].response_headers_to_add[1].header.value: Invalid header configuration. Un-escaped % at position 2`,
  },
  {
    name: 'host to remove',
    change: (b) => (hcm(b).route_config.request_headers_to_remove = ['x-a', 'Host']),
    error: `${HCM}.typed_config.route_config.request_headers_to_remove[1]: :-prefixed or host headers may not be removed`,
  },
  {
    name: 'a match without a path specifier',
    change: (b) => (routes(b)[1].match = { headers: [{ name: 'x', present_match: true }] }),
    error: `${ROUTES}[1].match.path_specifier: is required: set one of prefix, path, safe_regex, connect_matcher, path_separated_prefix, path_match_policy`,
  },
  {
    name: 'redirect port',
    change: (b) => {
      delete routes(b)[1].route;
      routes(b)[1].redirect = { host_redirect: 'example.com', port_redirect: 70000 };
    },
    error: `${ROUTES}[1].redirect.port_redirect: 70000 is not a port`,
  },
  {
    name: 'redirect regex rewrite',
    change: (b) => {
      delete routes(b)[1].route;
      routes(b)[1].redirect = { regex_rewrite: { pattern: { google_re2: {}, regex: '^/a' }, substitution: '/b' } };
    },
    error: `${ROUTES}[1].redirect.regex_rewrite: regex_rewrite is not implemented by this build yet (it would be ignored)`,
  },
  { name: 'direct response status', change: (b) => (routes(b)[0].direct_response.status = 700), error: `${ROUTES}[0].direct_response.status: value must be inside range [200, 600)` },
  {
    name: 'direct response body of bytes',
    change: (b) => (routes(b)[0].direct_response.body = { inline_bytes: 'b2s=' }),
    error: `${ROUTES}[0].direct_response.body: an inline_string or a filename is required (inline_bytes is not supported yet)`,
  },
  {
    name: 'virtual host without domains',
    change: (b) => (hcm(b).route_config.virtual_hosts[0].domains = []),
    error: `${HCM}.typed_config.route_config.virtual_hosts[0].domains: value must contain at least 1 item(s)`,
  },
  {
    name: 'virtual cluster without a name',
    change: (b) => (hcm(b).route_config.virtual_hosts[0].virtual_clusters = [{ headers: [{ name: ':method', exact_match: 'GET' }] }]),
    error: `${HCM}.typed_config.route_config.virtual_hosts[0].virtual_clusters[0].name: value length must be at least 1 runes`,
  },
  {
    name: 'virtual cluster without header matchers',
    change: (b) => (hcm(b).route_config.virtual_hosts[0].virtual_clusters = [{ name: 'gets', headers: [] }]),
    error: `${HCM}.typed_config.route_config.virtual_hosts[0].virtual_clusters[0].headers: virtual clusters must define either 'pattern' or 'headers'`,
  },
  {
    name: 'virtual cluster header matcher with a bad regex',
    change: (b) => (hcm(b).route_config.virtual_hosts[0].virtual_clusters = [{ name: 'rides', headers: [{ name: ':path', safe_regex_match: { google_re2: {}, regex: '/rides/(\\d+' } }] }]),
    error: `${HCM}.typed_config.route_config.virtual_hosts[0].virtual_clusters[0].headers[0].safe_regex_match.regex: invalid regex '/rides/(\\d+': missing closing )`,
  },
  {
    name: 'default host for HTTP/1.0 that is no host',
    change: (b) => (hcm(b).http_protocol_options = { accept_http_10: true, default_host_for_http_10: 'user@host' }),
    error: `${HCM}.typed_config.http_protocol_options.default_host_for_http_10: 'user@host' is not a valid host[:port]`,
  },
  { name: 'no http filters', change: (b) => (hcm(b).http_filters = []), error: `${HCM}.typed_config.http_filters: the last HTTP filter must be proxy.filters.http.router` },
  {
    name: 'unknown http filter',
    change: (b) => hcm(b).http_filters.unshift({ name: 'envoy.filters.http.lua' }),
    error: `${HCM}.typed_config.http_filters[0].name: Didn't find a registered implementation for name: 'proxy.filters.http.lua'`,
  },
  {
    name: 'router twice',
    change: (b) => hcm(b).http_filters.push({ name: 'envoy.router' }),
    error: `${HCM}.typed_config.http_filters[0].name: terminal filter named proxy.filters.http.router must be the last filter in a http filter chain`,
  },

  // Clusters.
  { name: 'cluster without name', change: (b) => delete web(b).name, error: `${WEB}.name: value length must be at least 1 runes` },
  { name: 'duplicate cluster', change: (b) => (web(b).name = 'backend'), error: `${WEB}.name: cluster manager: duplicate cluster 'backend'` },
  { name: 'custom cluster type', change: (b) => ((web(b).cluster_type = { name: 'custom' }), delete web(b).type), error: `${WEB}.cluster_type.name: Didn't find a registered cluster factory implementation for name: 'custom' (known: proxy.clusters.aggregate)` },
  { name: 'static without endpoints', change: (b) => delete web(b).load_assignment, error: `${WEB}.load_assignment: a STATIC cluster needs a load_assignment (or hosts)` },
  { name: 'load assignment without name', change: (b) => delete web(b).load_assignment.cluster_name, error: `${WEB}.load_assignment.cluster_name: value length must be at least 1 runes` },
  { name: 'ring hash config without RING_HASH', change: (b) => (web(b).ring_hash_lb_config = {}), error: `${WEB}.ring_hash_lb_config: requires lb_policy RING_HASH, but lb_policy is LEAST_REQUEST` },
  {
    name: 'least request config without LEAST_REQUEST',
    change: (b) => (backend(b).least_request_lb_config = { choice_count: 3 }),
    error: `${BACKEND}.least_request_lb_config: requires lb_policy LEAST_REQUEST, but lb_policy is RANDOM`,
  },
  { name: 'newer lb policy', change: (b) => (web(b).lb_policy = 'LOAD_BALANCING_POLICY_CONFIG'), error: `${WEB}.lb_policy: LOAD_BALANCING_POLICY_CONFIG is not supported` },
  ...[
    { fallback: [], error: 'fallback_keys_subset cannot be empty' },
    { fallback: ['version', 'zone'], error: 'fallback_keys_subset must be a subset of selector keys' },
    { fallback: ['stage', 'version'], error: 'fallback_keys_subset cannot be equal to keys' },
  ].map(({ fallback, error }) => ({
    name: `fallback_keys_subset ${JSON.stringify(fallback)}`,
    change: (b: Json) => {
      web(b).lb_subset_config = {
        subset_selectors: [
          { keys: ['version'] },
          { keys: ['version', 'stage'], fallback_policy: 'KEYS_SUBSET', fallback_keys_subset: fallback },
        ],
      };
    },
    error: `${WEB}.lb_subset_config.subset_selectors[1].fallback_keys_subset: ${error}`,
  })),
  { name: 'dns refresh rate below 1ms', change: (b) => (web(b).dns_refresh_rate = '0.000500s'), error: `${WEB}.dns_refresh_rate: value must be greater than or equal to 1ms` },
  {
    name: 'refresh rate without base interval',
    change: (b) => (web(b).dns_failure_refresh_rate = { max_interval: '10s' }),
    error: `${WEB}.dns_failure_refresh_rate.base_interval: value is required`,
  },
  {
    name: 'refresh rate base not below max',
    change: (b) => (web(b).dns_failure_refresh_rate = { base_interval: '10s', max_interval: '10s' }),
    error: `${WEB}.dns_failure_refresh_rate.base_interval: must be less than max_interval`,
  },
  { name: 'endpoint weight 0', change: (b) => (webEndpoint(b).load_balancing_weight = 0), error: `${WEB_ENDPOINT}.load_balancing_weight: value must be greater than or equal to 1` },
  { name: 'endpoint weight above uint32', change: (b) => (webEndpoint(b).load_balancing_weight = 2 ** 32), error: `${WEB_ENDPOINT}.load_balancing_weight: out of range for uint32: 4294967296` },
  {
    name: 'hostname in a STATIC cluster',
    change: (b) => (webEndpoint(b).endpoint.address.socket_address.address = 'web-1.internal'),
    error: `${WEB_ENDPOINT}.endpoint.address.socket_address.address: malformed IP address: web-1.internal`,
  },
  {
    name: 'named endpoint',
    change: (b) => (web(b).load_assignment.endpoints[0].lb_endpoints[0] = { endpoint_name: 'web-1' }),
    error: `${WEB_ENDPOINT}.endpoint: missing required field (named endpoints are not supported)`,
  },
];

test('every invalid configuration gets its one-line message', () => {
  for (const { name, change, error } of CASES) {
    const bootstrap = v3Bootstrap();
    change(bootstrap);
    assert.throws(
      () => loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), bootstrapVersion: 3, allowUnknownStaticFields: false }),
      (thrown: unknown) => {
        assert.ok(thrown instanceof ConfigError, name);
        assert.equal(thrown.message, `--config-yaml: ${error}`, name);
        assert.doesNotMatch(thrown.message, /\n/, name);
        return true;
      },
      name,
    );
  }
});

test('the fixture itself is valid, so every case above fails for its own reason', () => {
  assert.doesNotThrow(() => loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(v3Bootstrap()), allowUnknownStaticFields: false }));
});

test('hostnames are endpoints of DNS clusters', () => {
  const bootstrap = v3Bootstrap();
  web(bootstrap).type = 'STRICT_DNS';
  webEndpoint(bootstrap).endpoint.address.socket_address.address = 'web-1.internal';
  const { bootstrap: model } = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
  assert.equal(model.clusters[1].type, 'STRICT_DNS');
  assert.equal(model.clusters[1].loadAssignment.endpoints[0].lbEndpoints[0].address.address, 'web-1.internal');
});

test('validate_clusters: false lets a route name a cluster CDS brings later (weighted ones too)', () => {
  const bootstrap = v3Bootstrap();
  hcm(bootstrap).route_config.validate_clusters = false;
  routes(bootstrap)[1].route.cluster = 'from_cds';
  routes(bootstrap).push({ match: { prefix: '/w' }, route: { weighted_clusters: { clusters: [{ name: 'also_from_cds', weight: 100 }] } } });
  assert.doesNotThrow(() => loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false }));
  hcm(bootstrap).route_config.validate_clusters = true;
  assert.throws(() => loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false }), /route: unknown (weighted )?cluster/);
});
