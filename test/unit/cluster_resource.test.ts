// A CDS Cluster resource goes through the stages of a static cluster: the same cluster is
// refused with the same reason at the same path below its resource, or gives the same model.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadClusterResource } from '../../src/config/cluster_resource';
import { ConfigError, FieldError } from '../../src/config/errors';
import type { JsonObject } from '../../src/config/json';
import { loadBootstrap } from '../../src/config/load';
import { protoSchema } from '../../src/config/schema';
import { ResourceDecoder } from '../../src/config/xds/resource_decoder';
import { CLUSTER_RESOURCE } from '../../src/config/xds/resource_types';
import { createHeapStatsStore } from '../../src/stats/store';
import { silentLogger } from '../helpers/data_plane';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const CLUSTER_TYPE = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

function clusterJson(extra: JsonObject = {}): JsonObject {
  return {
    name: 'svc',
    connect_timeout: '0.25s',
    load_assignment: {
      cluster_name: 'svc',
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 8080 } } } }] }],
    },
    ...extra,
  };
}

/** The cluster in a bootstrap, loaded and checked as `--mode validate` does: the first error, or the model. */
function asStatic(cluster: JsonObject, disabledExtensions: ReadonlySet<string> = new Set()) {
  try {
    const loaded = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify({ static_resources: { clusters: [cluster] } }), allowUnknownStaticFields: false, disabledExtensions });
    return { config: loaded.bootstrap.clusters[0]!, error: null };
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return { config: null, error: { path: error.fieldPath, reason: error.reason } };
  }
}

/** The cluster as the third resource of a CDS update, decoded as a subscription decodes it. */
async function asDynamic(cluster: JsonObject, disabledExtensions: ReadonlySet<string> = new Set()) {
  const schema = protoSchema();
  const decoder = new ResourceDecoder(schema, 'reject', createHeapStatsStore().counter('server.dynamic_unknown_fields'), silentLogger);
  const other = { '@type': CLUSTER_TYPE, ...clusterJson({ name: 'other' }) };
  const response = await decoder.decode({ version_info: '1', resources: [other, other, { '@type': CLUSTER_TYPE, ...cluster }] }, CLUSTER_RESOURCE);
  try {
    return { config: loadClusterResource(schema, response.resources[2]!.resource, 'resources[2]', disabledExtensions, builtinExtensions()).config, error: null };
  } catch (error) {
    assert.ok(error instanceof FieldError, String(error));
    return { config: null, error: { path: error.fieldPath, reason: error.reason } };
  }
}

const REFUSED: ReadonlyArray<[string, JsonObject, string]> = [
  ['a proto rule (connect_timeout > 0)', clusterJson({ connect_timeout: '0s' }), 'connect_timeout'],
  ['a validator (maglev table size)', clusterJson({ lb_policy: 'MAGLEV', maglev_lb_config: { table_size: 100 } }), 'maglev_lb_config.table_size'],
  ['a validator (eds_cluster_config outside EDS)', clusterJson({ eds_cluster_config: { service_name: 'x' } }), 'eds_cluster_config'],
  ['the capability check (a field not acted on)', clusterJson({ upstream_config: { name: 'x', typed_config: { '@type': 'type.googleapis.com/google.protobuf.Empty' } } }), 'upstream_config'],
  ['the capability check (a policy this build lacks)', clusterJson({ lb_policy: 'CLUSTER_PROVIDED' }), 'lb_policy'],
];

for (const [what, cluster, field] of REFUSED) {
  test(`refused by ${what}: same reason, same path below the resource`, async () => {
    const staticResult = asStatic(cluster);
    const dynamicResult = await asDynamic(cluster);
    assert.ok(staticResult.error !== null, 'the static cluster is refused');
    assert.equal(staticResult.error.path, `static_resources.clusters[0].${field}`);
    assert.deepEqual(dynamicResult.error, { path: `resources[2].${field}`, reason: staticResult.error.reason });
  });
}

const PROXY_PROTOCOL_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.proxy_protocol.v3.ProxyProtocolUpstreamTransport';
const RAW_BUFFER = { name: 'envoy.transport_sockets.raw_buffer', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer' } };

/** --disable-extensions entries, the cluster using one, the field refused. */
const DISABLED: ReadonlyArray<[string, string, JsonObject, string]> = [
  ['a transport socket', 'envoy.transport_sockets.upstream/envoy.transport_sockets.raw_buffer', clusterJson({ transport_socket: RAW_BUFFER }), 'transport_socket.name'],
  [
    'a transport socket match',
    'envoy.transport_sockets.upstream/envoy.transport_sockets.raw_buffer',
    clusterJson({ transport_socket_matches: [{ name: 'plain', match: {}, transport_socket: RAW_BUFFER }] }),
    'transport_socket_matches[0].transport_socket.name',
  ],
  [
    'the upstream PROXY protocol transport socket',
    'envoy.transport_sockets.upstream/envoy.transport_sockets.upstream_proxy_protocol',
    clusterJson({ transport_socket: { name: 'envoy.transport_sockets.upstream_proxy_protocol', typed_config: { '@type': PROXY_PROTOCOL_TYPE, config: { version: 'V2' }, transport_socket: RAW_BUFFER } } }),
    'transport_socket.name',
  ],
  [
    'the transport socket the PROXY protocol one wraps',
    'envoy.transport_sockets.upstream/envoy.transport_sockets.raw_buffer',
    clusterJson({ transport_socket: { name: 'envoy.transport_sockets.upstream_proxy_protocol', typed_config: { '@type': PROXY_PROTOCOL_TYPE, transport_socket: RAW_BUFFER } } }),
    'transport_socket.typed_config.transport_socket.name',
  ],
  ['a cluster type', 'envoy.clusters/envoy.cluster.strict_dns', clusterJson({ type: 'STRICT_DNS' }), 'type'],
];

for (const [what, entry, cluster, field] of DISABLED) {
  test(`--disable-extensions: ${what} disabled is refused alike, static or from CDS`, async () => {
    const disabled = builtinExtensions().resolveDisabled([entry]).keys;
    assert.equal(disabled.size, 1, `${entry} names an extension`);
    const staticResult = asStatic(cluster, disabled);
    assert.equal(staticResult.error?.path, `static_resources.clusters[0].${field}`);
    assert.match(staticResult.error.reason, /\(disabled by --disable-extensions\)$/);
    assert.deepEqual((await asDynamic(cluster, disabled)).error, { path: `resources[2].${field}`, reason: staticResult.error.reason });
    // Enabled, both accept it.
    assert.equal((await asDynamic(cluster)).error, null);
  });
}

test('an accepted cluster has the model of the same static cluster, extension names canonical', async () => {
  const cluster = clusterJson({
    lb_policy: 'LEAST_REQUEST',
    circuit_breakers: { thresholds: [{ max_connections: 7 }] },
    transport_socket: { name: 'envoy.transport_sockets.raw_buffer', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer' } },
  });
  const staticResult = asStatic(cluster);
  const dynamicResult = await asDynamic(cluster);
  assert.equal(staticResult.error, null);
  assert.deepEqual(dynamicResult.config, staticResult.config);
  assert.equal((dynamicResult.config!.source as { transport_socket: { name: string } }).transport_socket.name, 'proxy.transport_sockets.raw_buffer');
});

test('an EDS cluster from CDS whose file source is missing is refused at its path, as Envoy creates its subscription with it', async () => {
  const missing = '/nonexistent/proxy-eds.json';
  const eds = (file: string) => ({ name: 'svc', connect_timeout: '0.25s', type: 'EDS', eds_cluster_config: { eds_config: { path: file } } });
  assert.deepEqual((await asDynamic(eds(missing))).error, {
    path: 'resources[2].eds_cluster_config.eds_config.path',
    reason: `paths must refer to an existing path in the system: '${missing}' does not exist`,
  });
  assert.equal((await asDynamic(eds('/dev/null'))).error, null);
});
