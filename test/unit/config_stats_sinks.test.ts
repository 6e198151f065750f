// The bootstrap's stats_sinks through the configuration pipeline: the three sinks of this build
// by every name Envoy 1.16 takes (v2 `config:` Structs included), their models with Envoy's
// defaults, and what is refused by field path: unknown sinks, fields this build would ignore,
// clusters a sink cannot reach, and a TCP statsd sink without a node identity.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as yaml from 'js-yaml';
import { loadBootstrap } from '../../src/config/load';
import type { StatsSinkConfig } from '../../src/config/model';
import { checkStatsSinkPreconditions } from '../../src/config/stats_sink_preconditions';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const STATSD_TYPE = 'type.googleapis.com/envoy.config.metrics.v3.StatsdSink';
const DOG_STATSD_TYPE = 'type.googleapis.com/envoy.config.metrics.v3.DogStatsdSink';
const METRICS_SERVICE_TYPE = 'type.googleapis.com/envoy.config.metrics.v3.MetricsServiceConfig';
const UDP_ADDRESS = { socket_address: { address: '127.0.0.1', port_value: 8125 } };
type Json = Record<string, any>;

function cluster(name: string, extra: Json = {}): Json {
  return {
    name,
    connect_timeout: '1s',
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 9000 } } } }] }] },
    ...extra,
  };
}

const TLS_SOCKET = { name: 'envoy.transport_sockets.tls', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext' } };

function bootstrap(sinks: Json[], extra: Json = {}): Json {
  return {
    node: { id: 'n', cluster: 'c' },
    static_resources: { clusters: [cluster('statsd'), cluster('metrics'), cluster('secure', { transport_socket: TLS_SOCKET })] },
    stats_sinks: sinks,
    ...extra,
  };
}

function load(config: Json, options: { disabled?: string[]; version?: number } = {}) {
  const extensions = builtinExtensions();
  return loadBootstrap({
    extensions,
    configYaml: yaml.dump(config),
    allowUnknownStaticFields: false,
    bootstrapVersion: options.version ?? 3,
    disabledExtensions: extensions.resolveDisabled(options.disabled ?? []).keys,
  }).bootstrap;
}

function sinksOf(sinks: Json[]): readonly StatsSinkConfig[] {
  return load(bootstrap(sinks)).statsSinks;
}

function refusal(sinks: Json[], options: { disabled?: string[]; version?: number } = {}): string {
  try {
    load(bootstrap(sinks), options);
  } catch (error) {
    return (error as Error).message.replace(/^--config-yaml: /, '');
  }
  assert.fail('the configuration was accepted');
}

test('statsd to a UDP address: full names, Envoy prefix spelled ours by default, one line per datagram', () => {
  // Examples often say UDP; Envoy sends datagrams whatever the protocol says.
  const udp = { socket_address: { ...UDP_ADDRESS.socket_address, protocol: 'UDP' } };
  assert.deepEqual(sinksOf([{ name: 'envoy.stat_sinks.statsd', typed_config: { '@type': STATSD_TYPE, address: udp } }]), [
    { kind: 'statsd', name: 'proxy.stat_sinks.statsd', target: { kind: 'udp', address: { address: '127.0.0.1', port: 8125 } }, prefix: 'proxy', tagged: false, maxBytesPerDatagram: 0 },
  ]);
});

test('statsd over TCP through a static cluster, with a prefix', () => {
  const [sink] = sinksOf([{ name: 'proxy.stat_sinks.statsd', typed_config: { '@type': STATSD_TYPE, tcp_cluster_name: 'statsd', prefix: 'edge' } }]);
  assert.deepEqual(sink, { kind: 'statsd', name: 'proxy.stat_sinks.statsd', target: { kind: 'tcp', clusterName: 'statsd' }, prefix: 'edge', tagged: false, maxBytesPerDatagram: 0 });
});

test("Envoy 1.16's legacy names and v2 config Structs, and a sink found by its typed_config's type", () => {
  const v2 = load(
    {
      node: { id: 'n', cluster: 'c' },
      stats_sinks: [
        { name: 'envoy.statsd', config: { address: UDP_ADDRESS } },
        { name: 'envoy.dog_statsd', config: { address: UDP_ADDRESS, prefix: 'dd' } },
        { name: 'some.name', typed_config: { '@type': 'type.googleapis.com/envoy.config.metrics.v2.StatsdSink', address: UDP_ADDRESS } },
      ],
    },
    { version: 2 },
  ).statsSinks;
  assert.deepEqual(v2.map((sink) => sink.name), ['proxy.stat_sinks.statsd', 'proxy.stat_sinks.dog_statsd', 'proxy.stat_sinks.statsd']);
  assert.equal(v2[1]!.kind === 'statsd' && v2[1]!.prefix, 'dd');
});

test('dog_statsd: tag-extracted names with tags, datagrams up to max_bytes_per_datagram', () => {
  const [sink] = sinksOf([{ name: 'envoy.stat_sinks.dog_statsd', typed_config: { '@type': DOG_STATSD_TYPE, address: UDP_ADDRESS, max_bytes_per_datagram: 1400 } }]);
  assert.deepEqual(sink, { kind: 'statsd', name: 'proxy.stat_sinks.dog_statsd', target: { kind: 'udp', address: { address: '127.0.0.1', port: 8125 } }, prefix: 'proxy', tagged: true, maxBytesPerDatagram: 1400 });
});

test('metrics_service: envoy_grpc or google_grpc, AUTO transport (V2 in Envoy 1.16), counters as values by default', () => {
  const sinks = sinksOf([
    { name: 'envoy.metrics_service', typed_config: { '@type': METRICS_SERVICE_TYPE, grpc_service: { envoy_grpc: { cluster_name: 'metrics' } } } },
    {
      name: 'envoy.stat_sinks.metrics_service',
      typed_config: { '@type': METRICS_SERVICE_TYPE, grpc_service: { google_grpc: { target_uri: 'localhost:9090', stat_prefix: 'ms' } }, transport_api_version: 'V3', report_counters_as_deltas: true },
    },
  ]);
  assert.deepEqual(sinks, [
    { kind: 'metrics_service', name: 'proxy.stat_sinks.metrics_service', target: { kind: 'envoy_grpc', clusterName: 'metrics' }, transportApiVersion: 'AUTO', reportCountersAsDeltas: false },
    {
      kind: 'metrics_service',
      name: 'proxy.stat_sinks.metrics_service',
      target: { kind: 'google_grpc', targetUri: 'localhost:9090', statPrefix: 'ms' },
      transportApiVersion: 'V3',
      reportCountersAsDeltas: true,
    },
  ]);
});

const refused: [string, Json, string][] = [
  ['a sink this build does not have', { name: 'envoy.stat_sinks.hystrix' }, "stats_sinks[0].name: Didn't find a registered implementation for name: 'proxy.stat_sinks.hystrix'"],
  ['statsd with neither an address nor a cluster', { name: 'envoy.statsd' }, 'stats_sinks[0].typed_config.statsd_specifier: is required: set one of address, tcp_cluster_name'],
  ['statsd with a typed_config that sets neither', { name: 'envoy.statsd', typed_config: { '@type': STATSD_TYPE, prefix: 'x' } }, 'stats_sinks[0].typed_config.statsd_specifier: is required'],
  ['a cluster that does not exist', { name: 'envoy.statsd', typed_config: { '@type': STATSD_TYPE, tcp_cluster_name: 'nope' } }, "stats_sinks[0].typed_config.tcp_cluster_name: tcp statsd: unknown cluster 'nope'"],
  ['a cluster with TLS', { name: 'envoy.statsd', typed_config: { '@type': STATSD_TYPE, tcp_cluster_name: 'secure' } }, "stats_sinks[0].typed_config.tcp_cluster_name: tcp statsd: cluster 'secure' has a transport socket"],
  ['a hostname address', { name: 'envoy.statsd', typed_config: { '@type': STATSD_TYPE, address: { socket_address: { address: 'statsd.local', port_value: 8125 } } } }, 'stats_sinks[0].typed_config.address.socket_address.address: malformed IP address: statsd.local'],
  ['port 0', { name: 'envoy.statsd', typed_config: { '@type': STATSD_TYPE, address: { socket_address: { address: '127.0.0.1', port_value: 0 } } } }, 'stats_sinks[0].typed_config.address.socket_address.port_value: a statsd address needs a port'],
  ['a pipe', { name: 'envoy.dog_statsd', typed_config: { '@type': DOG_STATSD_TYPE, address: { pipe: { path: '/tmp/statsd.sock' } } } }, 'stats_sinks[0].typed_config.address.pipe: pipe addresses are not supported; use socket_address'],
  ['a datagram size of 0', { name: 'envoy.dog_statsd', typed_config: { '@type': DOG_STATSD_TYPE, address: UDP_ADDRESS, max_bytes_per_datagram: 0 } }, 'stats_sinks[0].typed_config.max_bytes_per_datagram'],
  ['a metrics service without a gRPC service', { name: 'envoy.metrics_service' }, 'stats_sinks[0].typed_config.grpc_service: value is required'],
  ['an unknown gRPC cluster', { name: 'envoy.metrics_service', typed_config: { '@type': METRICS_SERVICE_TYPE, grpc_service: { envoy_grpc: { cluster_name: 'nope' } } } }, "stats_sinks[0].typed_config.grpc_service.envoy_grpc.cluster_name: Unknown gRPC client cluster 'nope'"],
  ['a gRPC cluster with TLS', { name: 'envoy.metrics_service', typed_config: { '@type': METRICS_SERVICE_TYPE, grpc_service: { envoy_grpc: { cluster_name: 'secure' } } } }, "cluster 'secure' has a transport socket: TLS to a metrics service is not supported by this build (it would be plaintext)"],
];

for (const [what, sink, message] of refused) {
  test(`${what} is refused by field path`, () => {
    const error = refusal([sink]);
    assert.ok(error.includes(message), error);
  });
}

const unimplemented: [string, Json, string][] = [
  // Newer than Envoy 1.16.
  ['emit_tags_as_labels', { name: 'envoy.metrics_service', typed_config: { '@type': METRICS_SERVICE_TYPE, grpc_service: { envoy_grpc: { cluster_name: 'metrics' } }, emit_tags_as_labels: true } }, 'stats_sinks[0].typed_config.emit_tags_as_labels'],
  ['a gRPC timeout', { name: 'envoy.metrics_service', typed_config: { '@type': METRICS_SERVICE_TYPE, grpc_service: { envoy_grpc: { cluster_name: 'metrics' }, timeout: '1s' } } }, 'stats_sinks[0].typed_config.grpc_service.timeout'],
  ['google_grpc credentials', { name: 'envoy.metrics_service', typed_config: { '@type': METRICS_SERVICE_TYPE, grpc_service: { google_grpc: { target_uri: 'h:1', stat_prefix: 'p', channel_credentials: { local_credentials: {} } } } } }, 'stats_sinks[0].typed_config.grpc_service.google_grpc.channel_credentials'],
  ['a resolver for the statsd address', { name: 'envoy.statsd', typed_config: { '@type': STATSD_TYPE, address: { socket_address: { ...UDP_ADDRESS.socket_address, resolver_name: 'r' } } } }, 'stats_sinks[0].typed_config.address.socket_address.resolver_name'],
];

for (const [what, sink, path] of unimplemented) {
  test(`${what} is refused as a field this build would ignore`, () => {
    assert.match(refusal([sink]), new RegExp(`${path.replace(/[.[\]]/g, '\\$&')}: \\w+ is not implemented by this build yet \\(it would be ignored\\)`));
  });
}

test('--disable-extensions takes a sink away, as if it did not exist', () => {
  const error = refusal([{ name: 'envoy.statsd', typed_config: { '@type': STATSD_TYPE, address: UDP_ADDRESS } }], { disabled: ['envoy.stats_sinks/envoy.stat_sinks.statsd'] });
  assert.match(error, /stats_sinks\[0\]\.name: Didn't find a registered implementation for name: 'proxy\.stat_sinks\.statsd' \(disabled by --disable-extensions\)/);
});

test("a TCP statsd sink needs the node's identity, which --service-node and --service-cluster may give", () => {
  const loaded = load(bootstrap([{ name: 'envoy.statsd', typed_config: { '@type': STATSD_TYPE, tcp_cluster_name: 'statsd' } }], { node: { id: 'n' } }));
  const anonymous = { id: 'n', cluster: '', locality: { region: '', zone: '', subZone: '' } };
  assert.throws(() => checkStatsSinkPreconditions(loaded, anonymous), /^FieldError: stats_sinks\[0\]: tcp statsd: node 'id' and 'cluster' are required\. Set it either in 'node' config or via --service-node and --service-cluster options\.$/);
  checkStatsSinkPreconditions(loaded, { ...anonymous, cluster: 'from-the-command-line' });
  // A UDP sink needs none.
  checkStatsSinkPreconditions(load(bootstrap([{ name: 'envoy.statsd', typed_config: { '@type': STATSD_TYPE, address: UDP_ADDRESS } }], { node: {} })), anonymous);
});
