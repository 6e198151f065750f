import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import type { ClusterConfig } from '../../src/config/model';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore } from '../../src/stats/store';
import { ClusterInfo } from '../../src/upstream/worker/cluster_info';
import { silentLogger } from '../helpers/data_plane';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { SecretStore } from '../../src/tls/secret_store';

const STRICT = { extensions: builtinExtensions(), allowUnknownStaticFields: false };
const PROXY_PROTOCOL_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.proxy_protocol.v3.ProxyProtocolUpstreamTransport';
const TLS_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';
const RAW_BUFFER = { name: 'envoy.transport_sockets.raw_buffer' };

/** The connection-level fields, as both a v2 and a v3 cluster write them. */
const CONNECTION_FIELDS = {
  per_connection_buffer_limit_bytes: 65536,
  max_requests_per_connection: 7,
  upstream_bind_config: { source_address: { address: '127.0.0.2', port_value: 0 } },
  upstream_connection_options: { tcp_keepalive: { keepalive_probes: 3, keepalive_interval: 5 } },
  common_lb_config: { close_connections_on_host_set_change: true },
  track_timeout_budgets: true,
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
  assert.deepEqual(cluster.metadata, {});
  // An empty tcp_keepalive turns keepalive on with every knob at the system default.
  assert.deepEqual(load(v3({ upstream_connection_options: { tcp_keepalive: {} } }), 3).tcpKeepalive, { probes: null, timeS: null, intervalS: null });
});

/** The error loading `yaml` gives (the capability check included). */
function loadError(yaml: string): string {
  try {
    load(yaml, 3);
  } catch (e) {
    assert.ok(e instanceof ConfigError);
    return e.message;
  }
  assert.fail('loaded');
}

const CLUSTER = '--config-yaml: static_resources.clusters[0]';

test('Cluster.filters: Envoy 1.16 has no upstream network filter, the old proxy_protocol filter name included: refused by path', () => {
  for (const name of ['envoy.filters.network.upstream.nope', 'envoy.filters.network.upstream.proxy_protocol']) {
    const filter = { name, typed_config: { '@type': 'type.googleapis.com/envoy.config.core.v3.ProxyProtocolConfig', version: 'V2' } };
    assert.equal(loadError(v3({ filters: [filter] })), `${CLUSTER}.filters[0].name: Didn't find a registered implementation for name: '${name.replace('envoy.', 'proxy.')}'`);
  }
  assert.ok(!builtinExtensions().listed().some((e) => e.name === 'proxy.filters.network.upstream.proxy_protocol'));
});

test("upstream PROXY protocol: Envoy's transport socket (V1/V2 around raw_buffer or tls, in transport_socket_matches too) loads into the model", () => {
  const tls = { name: 'envoy.transport_sockets.tls', typed_config: { '@type': TLS_TYPE, sni: 'backend.example' } };
  const socket = (version: string | undefined, inner: object) => ({
    name: 'envoy.transport_sockets.upstream_proxy_protocol',
    typed_config: { '@type': PROXY_PROTOCOL_TYPE, ...(version === undefined ? {} : { config: { version } }), transport_socket: inner },
  });
  const cluster = load(v3({ transport_socket: socket('V2', tls), transport_socket_matches: [{ name: 'plain', match: { pp: true }, transport_socket: socket(undefined, RAW_BUFFER) }] }), 3);
  const outer = cluster.transportSocket;
  assert.ok(outer?.kind === 'upstream_proxy_protocol');
  assert.equal(outer.version, 'V2');
  assert.ok(outer.transportSocket.kind === 'tls');
  assert.equal(outer.transportSocket.context.sni, 'backend.example');
  assert.deepEqual(cluster.transportSocketMatches[0]!.transportSocket, { kind: 'upstream_proxy_protocol', version: 'V1', transportSocket: { kind: 'raw_buffer' } });
  // Found by its typed_config's type, as Envoy finds a factory, whatever its name.
  assert.equal(load(v3({ transport_socket: { ...socket('V1', RAW_BUFFER), name: 'pp' } }), 3).transportSocket?.kind, 'upstream_proxy_protocol');
  assert.ok(
    builtinExtensions().listed().some(
      (e) =>
        e.category === 'proxy.transport_sockets.upstream' &&
        e.name === 'proxy.transport_sockets.upstream_proxy_protocol' &&
        e.typeDescriptor === 'envoy.extensions.transport_sockets.proxy_protocol.v3.ProxyProtocolUpstreamTransport',
    ),
  );
});

test('upstream PROXY protocol: a missing or unknown wrapped socket, an unknown transport socket, and TLV fields are refused by path', () => {
  const TS = `${CLUSTER}.transport_socket`;
  const pp = (config: object) => ({ transport_socket: { name: 'envoy.transport_sockets.upstream_proxy_protocol', typed_config: { '@type': PROXY_PROTOCOL_TYPE, ...config } } });
  assert.equal(loadError(v3({ transport_socket: { name: 'envoy.transport_sockets.upstream_proxy_protocol' } })), `${TS}.typed_config.transport_socket: value is required`);
  assert.equal(loadError(v3(pp({}))), `${TS}.typed_config.transport_socket: value is required`);
  assert.equal(loadError(v3(pp({ transport_socket: { name: 'envoy.transport_sockets.alts' } }))), `${TS}.typed_config.transport_socket.name: Didn't find a registered implementation for name: 'proxy.transport_sockets.alts'`);
  assert.equal(loadError(v3({ transport_socket: { name: 'envoy.transport_sockets.nope' } })), `${TS}.name: Didn't find a registered implementation for name: 'proxy.transport_sockets.nope'`);
  assert.match(loadError(v3(pp({ config: { version: 'V2', pass_through_tlvs: {} }, transport_socket: RAW_BUFFER }))), /transport_socket\.typed_config\.config\.pass_through_tlvs: pass_through_tlvs is not implemented/);
});

test('metadata: reachable by filters through ClusterInfo, and kept in the v3 source /config_dump shows', () => {
  const cluster = load(v3(CONNECTION_FIELDS), 3);
  const info = new ClusterInfo(cluster, createHeapStatsStore(), new LiveRuntime([]), silentLogger, new SecretStore([]));
  assert.deepEqual(info.metadata['com.example'], { team: 'edge', tier: 1 });
  assert.deepEqual((cluster.source as { metadata: unknown }).metadata, { filter_metadata: { 'com.example': { team: 'edge', tier: 1 } } });
});
