import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FieldError } from '../../src/config/errors';
import * as protobuf from 'protobufjs/light';
import * as protojson from 'protobufjs/ext/protojson';
import type { JsonObject, JsonValue } from '../../src/config/json';
import { canonicalLeaf, decodeProtoJson, type LeafPosition } from '../../src/config/proto_json';
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

test('the leaf shortcut gives what protobufjs round trips give, for every scalar field of the main types', () => {
  const schema = protoSchema();
  const types = [
    CLUSTER,
    'envoy.config.bootstrap.v3.Bootstrap',
    'envoy.config.listener.v3.Listener',
    'envoy.config.core.v3.SocketAddress',
    'envoy.config.endpoint.v3.LbEndpoint',
    'envoy.config.route.v3.RouteAction',
    'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
  ].map((name) => schema.root.lookupType(name));
  const values: JsonValue[] = ['', 'x', 'ROUND_ROBIN', 'TCP', true, false, 0, 1, -1, 0x7fffffff, -0x80000000, 0xffffffff, 2 ** 32, 1.5];
  let compared = 0;
  for (const type of types) {
    for (const field of type.fieldsArray) {
      field.resolve();
      if (field.resolvedType instanceof protobuf.Type || field.map) continue;
      for (const value of values) {
        const position: LeafPosition = field.repeated ? { kind: 'element' } : { kind: 'single' };
        const shortcut = canonicalLeaf(field, value, position);
        if (typeof shortcut === 'symbol') continue;
        const wrapped = field.repeated ? [value] : value;
        const printed = (protojson.toJson(type, protojson.fromJson(type, { [field.name]: wrapped })) as JsonObject)[field.jsonName];
        assert.deepEqual(shortcut, field.repeated ? (printed as JsonValue[])[0] : printed, `${type.name}.${field.name} = ${JSON.stringify(value)}`);
        compared++;
      }
    }
  }
  assert.ok(compared > 100, `${compared} comparisons`);
});

test('whole-second durations come out as protobufjs prints them', () => {
  const duration = protoSchema().root.lookupType('google.protobuf.Duration');
  for (const value of ['0s', '1s', '300s', '99999999999s', '01s', '1.5s']) {
    const { json } = decode(CLUSTER, { name: 'c', connect_timeout: value });
    assert.equal(json['connect_timeout'], protojson.toJson(duration, protojson.fromJson(duration, value)), value);
  }
});
