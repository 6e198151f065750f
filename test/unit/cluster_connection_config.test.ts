import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkBootstrapCapabilities } from '../../src/config/capabilities';
import { ConfigError } from '../../src/config/errors';
import { registeredExtensions } from '../../src/config/extension_registry';
import { loadBootstrap } from '../../src/config/load';
import type { ClusterConfig } from '../../src/config/model';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore } from '../../src/stats/store';
import { ClusterInfo } from '../../src/upstream/cluster_info';
import { silentLogger } from '../helpers/data_plane';

const STRICT = { allowUnknownStaticFields: false };
const PROXY_PROTOCOL_TYPE = 'type.googleapis.com/envoy.config.core.v3.ProxyProtocolConfig';

/** The connection-level fields, as both a v2 and a v3 cluster write them. */
const CONNECTION_FIELDS = {
  per_connection_buffer_limit_bytes: 65536,
  max_requests_per_connection: 7,
  upstream_bind_config: { source_address: { address: '127.0.0.2', port_value: 0 } },
  upstream_connection_options: { tcp_keepalive: { keepalive_probes: 3, keepalive_interval: 5 } },
  common_lb_config: { close_connections_on_host_set_change: true },
  track_timeout_budgets: true,
  filters: [{ name: 'envoy.filters.network.upstream.proxy_protocol', typed_config: { '@type': PROXY_PROTOCOL_TYPE, version: 'V2' } }],
  metadata: { filter_metadata: { 'com.example': { team: 'edge', tier: 1 } } },
};

function v3(fields: object): string {
  return JSON.stringify({
    static_resources: {
      clusters: [
        {
          name: 'backend',
          connect_timeout: '1s',
          load_assignment: { cluster_name: 'backend', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 80 } } } }] }] },
          ...fields,
        },
      ],
    },
  });
}

function v2(fields: object): string {
  return JSON.stringify({
    static_resources: { clusters: [{ name: 'backend', connect_timeout: '1s', hosts: [{ socket_address: { address: '127.0.0.1', port_value: 80 } }], ...fields }] },
  });
}

function load(yaml: string, bootstrapVersion: number): ClusterConfig {
  const { bootstrap } = loadBootstrap({ configYaml: yaml, bootstrapVersion, ...STRICT });
  checkBootstrapCapabilities(bootstrap.source, '--config-yaml');
  return bootstrap.clusters[0]!;
}

for (const [version, form] of [[2, v2], [3, v3]] as const) {
  test(`v${version}: every connection-level cluster field loads into the model and passes the capability check`, () => {
    const cluster = load(form(CONNECTION_FIELDS), version);
    assert.equal(cluster.perConnectionBufferLimitBytes, 65536);
    assert.equal(cluster.maxRequestsPerConnection, 7);
    assert.deepEqual(cluster.upstreamBindConfig, { address: '127.0.0.2', port: 0 });
    assert.deepEqual(cluster.tcpKeepalive, { probes: 3, timeS: null, intervalS: 5 });
    assert.equal(cluster.closeConnectionsOnHostSetChange, true);
    assert.equal(cluster.trackTimeoutBudgets, true);
    assert.deepEqual(cluster.upstreamFilters, [{ name: 'proxy.filters.network.upstream.proxy_protocol', version: 'V2' }]);
    assert.deepEqual(cluster.metadata, { 'com.example': { team: 'edge', tier: 1 } });
  });
}

test('unset, the connection-level fields take Envoy defaults', () => {
  const cluster = load(v3({}), 3);
  assert.equal(cluster.perConnectionBufferLimitBytes, 1024 * 1024);
  assert.equal(cluster.maxRequestsPerConnection, 0);
  assert.equal(cluster.upstreamBindConfig, null);
  assert.equal(cluster.tcpKeepalive, null);
  assert.equal(cluster.closeConnectionsOnHostSetChange, false);
  assert.equal(cluster.trackTimeoutBudgets, false);
  assert.deepEqual(cluster.upstreamFilters, []);
  assert.deepEqual(cluster.metadata, {});
  // An empty tcp_keepalive turns keepalive on with every knob at the system default.
  assert.deepEqual(load(v3({ upstream_connection_options: { tcp_keepalive: {} } }), 3).tcpKeepalive, { probes: null, timeS: null, intervalS: null });
});

test('an upstream filter this build does not have, or a typed_config of another type, is refused by path', () => {
  assert.throws(
    () => load(v3({ filters: [{ name: 'envoy.filters.network.upstream.nope' }] }), 3),
    (e: unknown) => e instanceof ConfigError && /clusters\[0\]\.filters\[0\]\.name/.test(e.message) && /registered implementation/.test(e.message),
  );
  assert.throws(
    () => load(v3({ filters: [{ name: 'envoy.filters.network.upstream.proxy_protocol', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }] }), 3),
    (e: unknown) => e instanceof ConfigError && /filters\[0\]\.typed_config\.@type/.test(e.message),
  );
});

test('the PROXY protocol upstream filter is a registered extension', () => {
  assert.ok(
    registeredExtensions().some(
      (e) => e.category === 'proxy.filters.upstream_network' && e.name === 'proxy.filters.network.upstream.proxy_protocol' && e.typeDescriptor === 'envoy.config.core.v3.ProxyProtocolConfig',
    ),
  );
});

test('metadata: reachable by filters through ClusterInfo, and kept in the v3 source /config_dump shows', () => {
  const cluster = load(v3(CONNECTION_FIELDS), 3);
  const info = new ClusterInfo(cluster, createHeapStatsStore(), new LiveRuntime([]), silentLogger);
  assert.deepEqual(info.metadata['com.example'], { team: 'edge', tier: 1 });
  assert.deepEqual((cluster.source as { metadata: unknown }).metadata, { filter_metadata: { 'com.example': { team: 'edge', tier: 1 } } });
});
