import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FieldError } from '../../src/config/errors';
import { decodeProtoJson } from '../../src/config/proto_json';
import { protoSchema } from '../../src/config/schema';

function decode(typeName: string, input: unknown, allowUnknownFields = false) {
  const schema = protoSchema();
  return decodeProtoJson(schema, schema.root.lookupType(typeName), input, { allowUnknownFields });
}

const CLUSTER = 'envoy.config.cluster.v3.Cluster';

test('canonical output: snake_case in declaration order, defaults omitted, values normalized', () => {
  const { json } = decode(CLUSTER, {
    perConnectionBufferLimitBytes: 0,
    lbPolicy: 2,
    connect_timeout: '1.5s',
    name: 'c',
    respect_dns_ttl: false,
    alt_stat_name: '',
    ring_hash_lb_config: { minimum_ring_size: 1024 },
    metadata: { filter_metadata: { 'proxy.lb': { canary: true } } },
    health_checks: null,
  });
  assert.deepEqual(json, {
    name: 'c',
    connect_timeout: '1.500s',
    per_connection_buffer_limit_bytes: 0,
    lb_policy: 'RING_HASH',
    ring_hash_lb_config: { minimum_ring_size: '1024' },
    metadata: { filter_metadata: { 'proxy.lb': { canary: true } } },
  });
  assert.deepEqual(Object.keys(json), ['name', 'connect_timeout', 'per_connection_buffer_limit_bytes', 'lb_policy', 'ring_hash_lb_config', 'metadata']);
});

test('errors carry the path of the value, inside lists, maps and Any', () => {
  const cases: Array<[unknown, string, string]> = [
    [{ health_checks: [{}, { timeout: 'soon' }] }, 'health_checks[1].timeout', 'invalid duration: "soon"'],
    [{ metadata: { filter_metadata: { 'proxy.lb': 7 } } }, 'metadata.filter_metadata["proxy.lb"]', 'google.protobuf.Struct must be an object: 7'],
    [{ dns_lookup_family: 'V5_ONLY' }, 'dns_lookup_family', 'unknown enum value: "V5_ONLY"'],
    [{ transport_socket: { typed_config: { sni: 'x' } } }, 'transport_socket.typed_config', 'missing @type'],
    [{ transport_socket: { typed_config: { '@type': 7 } } }, 'transport_socket.typed_config.@type', 'expected a type URL, got 7'],
    [
      { transport_socket: { typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', max_session_keys: 'many' } } },
      'transport_socket.typed_config.max_session_keys',
      'invalid integer: "many"',
    ],
  ];
  for (const [input, fieldPath, reason] of cases) {
    assert.throws(() => decode(CLUSTER, input), new FieldError(fieldPath, reason));
  }
});

test('Any: the type URL is canonical, whichever package it names', () => {
  const { json } = decode(CLUSTER, {
    transport_socket: {
      name: 'tls',
      typed_config: { '@type': 'type.googleapis.com/proxy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', sni: 'a' },
    },
  });
  assert.deepEqual(json['transport_socket'], {
    name: 'tls',
    typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', sni: 'a' },
  });
});

test('unknown fields are listed by path when allowed, and dropped', () => {
  const { json, unknownFields } = decode(CLUSTER, { name: 'c', colour: 'blue', load_assignment: { shape: 'round' } }, true);
  assert.deepEqual(json, { name: 'c', load_assignment: {} });
  assert.deepEqual(unknownFields, ['colour', 'load_assignment.shape']);
});
