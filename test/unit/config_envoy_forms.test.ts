// Envoy 1.16 bootstraps as operators write them: v2 type URLs, enum names in any case,
// extensions named freely but typed, v2 extension_protocol_options. Each loads as its v3 rewrite.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as yaml from 'js-yaml';
import { redactedBootstrap, renderConfigDump } from '../../src/admin/config_dump_handler';
import { loadBootstrap } from '../../src/config/load';
import { decodeProtoJson } from '../../src/config/proto_json';
import { protoSchema } from '../../src/config/schema';
import { upgradeV2 } from '../../src/config/v2_upgrade';
import { Json } from '../helpers/config_fixtures';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const LOADED_AT = new Date('2020-10-08T12:00:00.000Z');
const V2 = 'type.googleapis.com/envoy.config.filter.network';
const V3 = 'type.googleapis.com/envoy.extensions.filters';

function load(bootstrap: Json, bootstrapVersion?: 2 | 3, disabled: string[] = []) {
  return loadBootstrap({
    extensions: builtinExtensions(),
    configYaml: yaml.dump(bootstrap),
    bootstrapVersion,
    allowUnknownStaticFields: false,
    disabledExtensions: builtinExtensions().resolveDisabled(disabled).keys,
  });
}

/** The static_resources of GET /config_dump's BootstrapConfigDump, and the cluster and listener dumps. */
function staticDump(bootstrap: Json, bootstrapVersion?: 2 | 3): Json {
  const body = renderConfigDump(redactedBootstrap(load(bootstrap, bootstrapVersion).bootstrap), LOADED_AT, { includeEds: false }).body;
  const { configs } = JSON.parse(String(body));
  return { bootstrap: configs[0].bootstrap.static_resources, clusters: configs[1], listeners: configs[2], routes: configs[4] };
}

function address(port: number): Json {
  return { socket_address: { address: '127.0.0.1', port_value: port } };
}

/** The operator's file: v2 type URLs, lower-case enums, a TCP proxy named `tcp`, a router named `my_router`. */
function asOperatorsWriteIt(): Json {
  return {
    admin: { access_log_path: '/dev/null', address: address(9901) },
    static_resources: {
      listeners: [
        {
          name: 'tcp_in',
          address: address(10000),
          filter_chains: [{ filters: [{ name: 'tcp', typed_config: { '@type': `${V2}.tcp_proxy.v2.TcpProxy`, stat_prefix: 'tcp', cluster: 'backend' } }] }],
        },
        {
          name: 'http_in',
          address: address(10001),
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.http_connection_manager',
                  typed_config: {
                    '@type': `${V2}.http_connection_manager.v2.HttpConnectionManager`,
                    stat_prefix: 'http',
                    codec_type: 'auto',
                    route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'backend' } }] }] },
                    http_filters: [{ name: 'my_router', typed_config: { '@type': 'type.googleapis.com/envoy.config.filter.http.router.v2.Router' } }],
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: [
        {
          name: 'backend',
          type: 'static',
          lb_policy: 'round_robin',
          connect_timeout: '1s',
          load_assignment: { cluster_name: 'backend', endpoints: [{ lb_endpoints: [{ endpoint: { address: address(8080) } }] }] },
        },
      ],
    },
  };
}

/** Its v3 rewrite, as the v3 documentation would have it. */
function itsV3Rewrite(): Json {
  const bootstrap = asOperatorsWriteIt();
  const [tcp, http] = bootstrap.static_resources.listeners;
  tcp.filter_chains[0].filters[0].name = 'envoy.filters.network.tcp_proxy';
  tcp.filter_chains[0].filters[0].typed_config['@type'] = `${V3}.network.tcp_proxy.v3.TcpProxy`;
  const hcm = http.filter_chains[0].filters[0];
  hcm.name = 'envoy.filters.network.http_connection_manager';
  hcm.typed_config['@type'] = `${V3}.network.http_connection_manager.v3.HttpConnectionManager`;
  hcm.typed_config.codec_type = 'AUTO';
  hcm.typed_config.http_filters = [{ name: 'envoy.filters.http.router', typed_config: { '@type': `${V3}.http.router.v3.Router` } }];
  Object.assign(bootstrap.static_resources.clusters[0], { type: 'STATIC', lb_policy: 'ROUND_ROBIN' });
  return bootstrap;
}

test('a v2 bootstrap as operators write it dumps as its v3 rewrite', () => {
  const v3 = staticDump(itsV3Rewrite(), 3);
  for (const version of [undefined, 2] as const) assert.deepEqual(staticDump(asOperatorsWriteIt(), version), v3);
  const listener = v3.bootstrap.listeners[1].filter_chains[0].filters[0];
  assert.equal(listener.name, 'proxy.filters.network.http_connection_manager');
  assert.equal(listener.typed_config['@type'], `${V3}.network.http_connection_manager.v3.HttpConnectionManager`);
  assert.equal(listener.typed_config.codec_type, undefined, 'AUTO is the default, which the dump omits');
  assert.equal(v3.bootstrap.listeners[0].filter_chains[0].filters[0].name, 'proxy.filters.network.tcp_proxy');
});

test('v2 type URLs resolve to the v3 types the protos name as their successors', () => {
  const schema = protoSchema();
  const cases: [string, string][] = [
    ['envoy.api.v2.Cluster', 'envoy.config.cluster.v3.Cluster'],
    ['envoy.api.v2.auth.UpstreamTlsContext', 'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext'],
    ['envoy.config.filter.network.tcp_proxy.v2.TcpProxy', 'envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy'],
    ['envoy.config.filter.http.router.v2.Router', 'envoy.extensions.filters.http.router.v3.Router'],
    // Nested messages carry their previous names too.
    ['envoy.api.v2.Cluster.LbSubsetConfig', 'envoy.config.cluster.v3.Cluster.LbSubsetConfig'],
    // Our package spelling of a v2 name.
    ['proxy.api.v2.Listener', 'envoy.config.listener.v3.Listener'],
  ];
  for (const [v2, v3] of cases) {
    const target = schema.resolveTypeUrl(`type.googleapis.com/${v2}`);
    assert.equal(target?.typeUrl, `type.googleapis.com/${v3}`, v2);
    assert.equal(target?.type.fullName, `.${v3}`, v2);
  }
  assert.equal(schema.resolveTypeUrl('type.googleapis.com/envoy.api.v2.NoSuchThing'), undefined);
});

test('a v2 type URL in a v3 bootstrap decodes as its v3 type', () => {
  const bootstrap = itsV3Rewrite();
  bootstrap.static_resources.listeners[0].filter_chains[0].filters[0].typed_config['@type'] = `${V2}.tcp_proxy.v2.TcpProxy`;
  assert.deepEqual(staticDump(bootstrap, 3), staticDump(itsV3Rewrite(), 3));
});

test('enum names are read in any case and kept in their declared spelling', () => {
  const bootstrap = itsV3Rewrite();
  bootstrap.static_resources.clusters[0].lb_policy = 'Least_Request';
  bootstrap.static_resources.clusters[0].dns_lookup_family = 'v4_only';
  bootstrap.static_resources.listeners[1].traffic_direction = 'outbound';
  const loaded = load(bootstrap, 3);
  assert.equal(loaded.bootstrap.clusters[0]!.lbPolicy, 'LEAST_REQUEST');
  assert.equal(loaded.bootstrap.listeners[1]!.trafficDirection, 'OUTBOUND');
  const source = loaded.bootstrap.source as Json;
  assert.equal(source.static_resources.clusters[0].dns_lookup_family, 'V4_ONLY');
  bootstrap.static_resources.clusters[0].lb_policy = 'fastest';
  assert.throws(() => load(bootstrap, 3), { message: /^--config-yaml: static_resources\.clusters\[0\]\.lb_policy: / });
});

test('the v2 ORIGINAL_DST_LB is upgraded in any case', () => {
  const cluster = { name: 'c', lb_policy: 'original_dst_lb' };
  const upgraded = upgradeV2({ static_resources: { clusters: [cluster] } }, builtinExtensions());
  assert.equal((upgraded.json as Json).static_resources.clusters[0].lb_policy, 'CLUSTER_PROVIDED');
});

test('an extension whose name is not registered is found by its typed_config type', () => {
  const loaded = load(asOperatorsWriteIt(), 2).bootstrap;
  const [tcp, http] = loaded.listeners.map((l) => l.filterChains[0]!.filters[0]!);
  assert.equal(tcp!.kind, 'tcp_proxy');
  assert.equal(tcp!.name, 'proxy.filters.network.tcp_proxy');
  assert.ok(http!.kind === 'http_connection_manager');
  assert.equal(http.httpFilters[0]!.name, 'proxy.filters.http.router');
  // A v2 HTTP connection manager named freely still gets its routes upgraded.
  const renamed = asOperatorsWriteIt();
  const hcm = renamed.static_resources.listeners[1].filter_chains[0].filters[0];
  hcm.name = 'my_hcm';
  hcm.typed_config.route_config.virtual_hosts[0].routes[0].route.host_rewrite = 'internal';
  const upgraded = upgradeV2(renamed, builtinExtensions()).json as Json;
  const action = upgraded.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].route;
  assert.deepEqual(action, { cluster: 'backend', host_rewrite_literal: 'internal' });
});

test('by name first: a registered name with another type is that extension, and its type is refused', () => {
  const bootstrap = itsV3Rewrite();
  const filter = bootstrap.static_resources.listeners[0].filter_chains[0].filters[0];
  filter.name = 'envoy.filters.network.http_connection_manager';
  assert.throws(() => load(bootstrap, 3), {
    message: /^--config-yaml: static_resources\.listeners\[0\]\.filter_chains\[0\]\.filters\[0\]\.typed_config\.@type: expected type envoy\.extensions\.filters\.network\.http_connection_manager\.v3\.HttpConnectionManager/,
  });
});

test('an unknown name with a type no registered extension takes stays refused at its path', () => {
  const bootstrap = itsV3Rewrite();
  bootstrap.static_resources.listeners[0].filter_chains[0].filters[0] = {
    name: 'tcp',
    typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer' },
  };
  assert.throws(() => load(bootstrap, 3), {
    message: "--config-yaml: static_resources.listeners[0].filter_chains[0].filters[0].name: Didn't find a registered implementation for name: 'tcp'",
  });
  bootstrap.static_resources.listeners[0].filter_chains[0].filters[0].typed_config['@type'] = 'type.googleapis.com/example.Unknown';
  assert.throws(() => load(bootstrap, 3), {
    message: "--config-yaml: static_resources.listeners[0].filter_chains[0].filters[0].typed_config.@type: unknown type 'type.googleapis.com/example.Unknown'",
  });
});

test('an extension found by type is still disabled by --disable-extensions', () => {
  assert.throws(() => load(asOperatorsWriteIt(), 2, ['envoy.filters.network/envoy.filters.network.tcp_proxy']), {
    message:
      "--config-yaml: static_resources.listeners[0].filter_chains[0].filters[0].name: Didn't find a registered implementation for name: 'proxy.filters.network.tcp_proxy' (disabled by --disable-extensions)",
  });
});

test('v2 extension_protocol_options becomes typed_extension_protocol_options of the extension\'s type', () => {
  const thrift = 'envoy.filters.network.thrift_proxy';
  const options = { [thrift]: { transport: 'framed' } };
  const upgraded = upgradeV2({ static_resources: { clusters: [{ name: 'c', extension_protocol_options: options }] } }, builtinExtensions());
  assert.deepEqual((upgraded.json as Json).static_resources.clusters[0], {
    name: 'c',
    typed_extension_protocol_options: {
      [thrift]: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.thrift_proxy.v3.ThriftProtocolOptions', transport: 'framed' },
    },
  });
  assert.deepEqual(upgraded.warnings, [
    'static_resources.clusters[0].extension_protocol_options: deprecated option, use typed_extension_protocol_options instead',
  ]);
  // Decoded, with its enum in any case, as the v3 field; then refused by loading, as this build has no thrift_proxy.
  const bootstrap = itsV3Rewrite();
  bootstrap.static_resources.clusters[0].extension_protocol_options = options;
  const schema = protoSchema();
  const decoded = decodeProtoJson(schema, schema.bootstrap, upgradeV2(bootstrap, builtinExtensions()).json, { allowUnknownFields: false });
  assert.deepEqual((decoded.json as Json).static_resources.clusters[0].typed_extension_protocol_options, {
    [thrift]: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.thrift_proxy.v3.ThriftProtocolOptions', transport: 'FRAMED' },
  });
  assert.throws(() => load(bootstrap, 2), {
    message: `--config-yaml: static_resources.clusters[0].typed_extension_protocol_options["${thrift}"]: protocol options for proxy.filters.network.thrift_proxy, a filter this build does not have (it would be ignored)`,
  });
  // A typed entry for the same extension wins.
  const typed = { [thrift]: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.thrift_proxy.v3.ThriftProtocolOptions', transport: 'HEADER' } };
  const both = upgradeV2({ static_resources: { clusters: [{ name: 'c', extension_protocol_options: options, typed_extension_protocol_options: typed }] } }, builtinExtensions());
  assert.deepEqual((both.json as Json).static_resources.clusters[0].typed_extension_protocol_options, typed);
  // An extension without protocol options cannot have its Struct read.
  assert.throws(() => upgradeV2({ static_resources: { clusters: [{ name: 'c', extension_protocol_options: { 'envoy.filters.network.tcp_proxy': {} } }] } }, builtinExtensions()), {
    message:
      'static_resources.clusters[0].extension_protocol_options["envoy.filters.network.tcp_proxy"]: Didn\'t find a registered network or http filter or protocol options implementation for name: \'envoy.filters.network.tcp_proxy\'',
  });
});
