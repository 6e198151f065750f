import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadBootstrap } from '../../src/config/load';
import { v3Bootstrap } from '../helpers/config_fixtures';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

function loadFixture() {
  return loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(v3Bootstrap()), allowUnknownStaticFields: false }).bootstrap;
}

test('node and admin', () => {
  const model = loadFixture();
  assert.deepEqual(model.node, { id: 'node-1', cluster: 'edge', locality: { region: 'eu', zone: 'eu-1a', subZone: 'rack-7' } });
  assert.deepEqual(model.admin, { address: { address: '127.0.0.1', port: 9901 }, accessLogPath: '/dev/null', profilePath: '/var/log/proxy/proxy.prof', security: null });
});

test('admin.profile_path is where /cpuprofiler writes', () => {
  const bootstrap = v3Bootstrap();
  bootstrap.admin.profile_path = '/srv/prof/p';
  const { bootstrap: model } = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
  assert.equal(model.admin?.profilePath, '/srv/prof/p');
});

test('no admin address means no admin listener', () => {
  const bootstrap = v3Bootstrap();
  delete bootstrap.admin.address;
  delete bootstrap.admin.access_log_path;
  const { bootstrap: model } = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
  assert.equal(model.admin, null);
});

test('listeners, with defaults filled in and names in our spelling', () => {
  const [tcp, http] = loadFixture().listeners;
  assert.deepEqual(tcp, {
    name: 'tcp_in',
    address: { address: '0.0.0.0', port: 10000 },
    perConnectionBufferLimitBytes: 1048576,
    reusePort: false,
    exactBalance: false,
    trafficDirection: 'UNSPECIFIED',
    listenerFilters: [],
    listenerFiltersTimeoutMs: 15000,
    continueOnListenerFiltersTimeout: false,
    filterChains: [
      {
        match: { destinationPort: null, serverNames: [], transportProtocol: '', applicationProtocols: [] },
        filters: [
          { kind: 'tcp_proxy', name: 'proxy.filters.network.tcp_proxy', statPrefix: 'tcp_in', cluster: 'backend', idleTimeoutMs: 30000, accessLogs: [] },
        ],
        transportSocket: null,
      },
    ],
  });
  assert.equal(http.perConnectionBufferLimitBytes, 32768);
  assert.deepEqual(http.filterChains[0].filters[0], {
    kind: 'http_connection_manager',
    name: 'proxy.filters.network.http_connection_manager',
    statPrefix: 'ingress_http',
    routeConfig: {
      name: 'local_route',
      virtualHosts: [
        {
          name: 'web',
          domains: ['example.com', '*'],
          routes: [
            {
              name: '',
              match: { path: '/healthz', caseSensitive: true, headers: [], queryParameters: [], grpc: false },
              action: { kind: 'direct_response', status: 200, body: 'ok', bodyFile: null },
            },
            {
              name: '',
              match: { prefix: '/', caseSensitive: true, headers: [], queryParameters: [], grpc: false },
              action: { kind: 'route', cluster: 'web:v1', timeoutMs: 2500, hostRewriteLiteral: 'internal', priority: 'DEFAULT' },
            },
          ],
          requireTls: 'NONE',
        },
      ],
    },
    httpFilters: [{ name: 'proxy.filters.http.router' }],
    rds: null,
    useRemoteAddress: true,
    xffNumTrustedHops: 0,
    serverName: 'proxy',
    streamIdleTimeoutMs: 300000,
    requestTimeoutMs: 0,
    requestHeadersTimeoutMs: 0,
    upgrades: {},
    tracing: null,
    generateRequestId: true,
    preserveExternalRequestId: false,
    skipXffAppend: false,
    via: '',
    serverHeaderTransformation: 'OVERWRITE',
    normalizePath: false,
    mergeSlashes: false,
    addUserAgent: false,
    commonHttpProtocolOptions: {
      idleTimeoutMs: 3600000,
      maxConnectionDurationMs: 0,
      maxHeadersCount: 100,
      maxStreamDurationMs: 0,
      headersWithUnderscoresAction: 'ALLOW',
    },
    httpProtocolOptions: { acceptHttp10: false, defaultHostForHttp10: '', headerKeyFormat: 'default', enableTrailers: false },
    codecType: 'AUTO',
    http2ProtocolOptions: {
      maxConcurrentStreams: 2147483647,
      initialStreamWindowSize: 268435456,
      initialConnectionWindowSize: 268435456,
      hpackTableSize: 4096,
      allowConnect: false,
      // Envoy 1.16's flood limits by default.
      floodLimits: {
        maxOutboundFrames: 10000,
        maxOutboundControlFrames: 1000,
        maxConsecutiveInboundFramesWithEmptyPayload: 1,
        maxInboundPriorityFramesPerStream: 100,
        maxInboundWindowUpdateFramesPerDataFrameSent: 10,
      },
    },
    accessLogs: [],
  });
});

test('http_protocol_options: accept_http_10 and default_host_for_http_10 reach the model', () => {
  const bootstrap = v3Bootstrap();
  bootstrap.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.http_protocol_options = {
    accept_http_10: true,
    default_host_for_http_10: 'legacy.example.com:8080',
  };
  const { bootstrap: model } = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
  const filter = model.listeners[1].filterChains[0].filters[0];
  assert.ok(filter.kind === 'http_connection_manager');
  assert.deepEqual(filter.httpProtocolOptions, { acceptHttp10: true, defaultHostForHttp10: 'legacy.example.com:8080', headerKeyFormat: 'default', enableTrailers: false });
});

test("server_name and via are header values: the configuration's text as UTF-8 bytes, as Envoy sends them", () => {
  const bootstrap = v3Bootstrap();
  Object.assign(bootstrap.static_resources.listeners[1].filter_chains[0].filters[0].typed_config, { server_name: 'café', via: 'edge→1' });
  const { bootstrap: model } = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
  const filter = model.listeners[1].filterChains[0].filters[0];
  assert.ok(filter.kind === 'http_connection_manager');
  assert.deepEqual([Buffer.from(filter.serverName, 'latin1').toString('utf8'), Buffer.from(filter.via, 'latin1').toString('utf8')], ['café', 'edge→1']);
});

test("paths and hosts the proxy writes or compares with a request's bytes are the configuration's UTF-8", () => {
  const bootstrap = v3Bootstrap();
  const hcm = bootstrap.static_resources.listeners[1].filter_chains[0].filters[0].typed_config;
  hcm.route_config.virtual_hosts[0].routes = [
    { match: { prefix: '/café' }, route: { cluster: 'backend', prefix_rewrite: '/menü', host_rewrite_literal: 'wörter.example' } },
    { match: { path: '/straße' }, redirect: { host_redirect: 'bücher.example', path_redirect: '/zürich' } },
    { match: { prefix: '/go' }, redirect: { prefix_rewrite: '/über' } },
  ];
  hcm.http_filters.unshift({
    name: 'envoy.filters.http.ext_authz',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
      http_service: { server_uri: { uri: 'http://authz', cluster: 'backend', timeout: '0.5s' }, path_prefix: '/prüfen' },
    },
  });
  const { bootstrap: model } = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
  const filter = model.listeners[1].filterChains[0].filters[0];
  assert.ok(filter.kind === 'http_connection_manager' && filter.routeConfig !== null);
  const text = (bytes: string | null | undefined) => Buffer.from(bytes ?? '', 'latin1').toString('utf8');
  const [first, second, third] = filter.routeConfig.virtualHosts[0]!.routes;
  assert.ok(first!.action.kind === 'route' && second!.action.kind === 'redirect' && third!.action.kind === 'redirect');
  assert.deepEqual(
    [first!.match.prefix, first!.action.prefixRewrite, first!.action.hostRewriteLiteral, second!.match.path, second!.action.host, second!.action.path, third!.action.prefixRewrite].map(text),
    ['/café', '/menü', 'wörter.example', '/straße', 'bücher.example', '/zürich', '/über'],
  );
  const authz = filter.httpFilters[0]!.extAuthz;
  assert.ok(authz?.service.kind === 'http');
  assert.equal(text(authz.service.pathPrefix), '/prüfen');
});

test('route defaults: 15 s timeout, case sensitive; 0s disables the timeout', () => {
  const bootstrap = v3Bootstrap();
  const routes = bootstrap.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes;
  delete routes[1].route.timeout;
  routes[0] = { match: { prefix: '/off', case_sensitive: false }, route: { cluster: 'backend', timeout: '0s' } };
  const { bootstrap: model } = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
  const filter = model.listeners[1].filterChains[0].filters[0];
  assert.ok(filter.kind === 'http_connection_manager');
  const [off, main] = filter.routeConfig.virtualHosts[0].routes;
  assert.deepEqual(off.match, { prefix: '/off', caseSensitive: false, headers: [], queryParameters: [], grpc: false });
  assert.deepEqual(off.action, { kind: 'route', cluster: 'backend', timeoutMs: 0, priority: 'DEFAULT' });
  assert.deepEqual(main.action, { kind: 'route', cluster: 'web:v1', timeoutMs: 15000, hostRewriteLiteral: 'internal', priority: 'DEFAULT' });
});

test('stats_flush_interval: 5 s unless set, in whole milliseconds', () => {
  assert.equal(loadFixture().statsFlushIntervalMs, 5000);
  for (const [interval, ms] of [['0.001s', 1], ['0.0025s', 2], ['299.999s', 299999]] as const) {
    const bootstrap = { ...v3Bootstrap(), stats_flush_interval: interval };
    assert.equal(loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false }).bootstrap.statsFlushIntervalMs, ms);
  }
});

test('clusters, with defaults filled in', () => {
  const [backend, web] = loadFixture().clusters;
  assert.equal(backend.statName, 'backend');
  assert.equal(web.statName, 'web_stats');
  assert.equal(backend.connectTimeoutMs, 250);
  assert.equal(web.connectTimeoutMs, 5000);
  assert.equal(backend.lbPolicy, 'RANDOM');
  assert.equal(web.lbPolicy, 'LEAST_REQUEST');
  assert.equal(web.type, 'STATIC');
  assert.equal(web.perConnectionBufferLimitBytes, 1048576);
  assert.equal(backend.maxRequestsPerConnection, 0);
  assert.equal(web.maxRequestsPerConnection, 100);
  assert.deepEqual(web.loadAssignment, {
    clusterName: 'web:v1',
    endpoints: [
      {
        locality: { region: '', zone: 'eu-1b', subZone: '' },
        priority: 1,
        loadBalancingWeight: 10,
        lbEndpoints: [
          {
            address: { address: '10.0.0.1', port: 80 },
            hostname: 'web-1',
            healthStatus: 'HEALTHY',
            loadBalancingWeight: 3,
            metadata: { 'proxy.lb': { version: 'v1' } },
          },
          { address: { address: '10.0.0.2', port: 80 }, hostname: '', healthStatus: 'UNKNOWN', loadBalancingWeight: 1, metadata: {} },
        ],
      },
    ],
    policy: { overprovisioningFactor: 140, dropOverload: null, endpointStaleAfterMs: null },
  });
});

test('statName falls back to the name, with every colon made an underscore', () => {
  const bootstrap = v3Bootstrap();
  delete bootstrap.static_resources.clusters[1].alt_stat_name;
  const { bootstrap: model } = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
  assert.equal(model.clusters[1].statName, 'web_v1');
});

test('stats_config: every default tag rule unless told otherwise; tags in our spelling, buckets sorted', () => {
  assert.deepEqual(loadFixture().statsConfig, { statsTags: [], useAllDefaultTags: true, histogramBucketSettings: [] });
  const bootstrap = v3Bootstrap();
  bootstrap.stats_config = {
    stats_tags: [{ tag_name: 'envoy.cluster_name' }, { tag_name: 'region', fixed_value: '' }],
    use_all_default_tags: false,
    histogram_bucket_settings: [{ match: { prefix: 'cluster.', ignore_case: true }, buckets: [10, 0.5, 2] }],
  };
  const { bootstrap: model } = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
  assert.deepEqual(model.statsConfig, {
    statsTags: [
      { tagName: 'proxy.cluster_name', fixedValue: null },
      { tagName: 'region', fixedValue: '' },
    ],
    useAllDefaultTags: false,
    histogramBucketSettings: [{ match: { kind: 'prefix', value: 'cluster.', ignoreCase: true }, buckets: [0.5, 2, 10] }],
  });
});

test('source is the canonical v3 JSON, for /config_dump', () => {
  const model = loadFixture();
  assert.deepEqual(model.clusters[0].source, {
    name: 'backend',
    type: 'STATIC',
    connect_timeout: '0.250s',
    lb_policy: 'RANDOM',
    load_assignment: {
      cluster_name: 'backend',
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 8080 } } } }] }],
    },
    transport_socket: {
      name: 'proxy.transport_sockets.tls',
      typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', sni: 'backend.internal' },
    },
    ignore_health_on_host_removal: true,
  });
  assert.deepEqual(Object.keys(model.source as object), ['node', 'static_resources', 'admin']);
});

test('the model is frozen', () => {
  const model = loadFixture();
  assert.ok(Object.isFrozen(model));
  assert.ok(Object.isFrozen(model.clusters[1].loadAssignment.endpoints[0].lbEndpoints[0].address));
  assert.ok(Object.isFrozen(model.source));
});

test('unnamed listeners get distinct generated names', () => {
  const bootstrap = v3Bootstrap();
  for (const listener of bootstrap.static_resources.listeners) delete listener.name;
  const { bootstrap: model } = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
  const [first, second] = model.listeners.map((listener) => listener.name);
  assert.match(first, /^[0-9a-f-]{36}$/);
  assert.notEqual(first, second);
});
