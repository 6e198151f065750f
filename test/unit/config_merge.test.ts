import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as protobuf from 'protobufjs/light';
import type { JsonObject } from '../../src/config/json';
import { mergeMessage } from '../../src/config/merge';
import { protoSchema } from '../../src/config/schema';

const schema = protoSchema();
const type = (name: string): protobuf.Type => schema.root.lookupType(name);
const CLUSTER = 'envoy.config.cluster.v3.Cluster';

test('repeated fields append; messages merge field by field; scalars replace', () => {
  const base = { node: { id: 'a', cluster: 'edge' }, static_resources: { clusters: [{ name: 'one' }], listeners: [{ name: 'in' }] } };
  const overlay = { node: { id: 'b' }, static_resources: { clusters: [{ name: 'two' }] } };
  assert.deepEqual(mergeMessage(schema.bootstrap, base, overlay), {
    node: { id: 'b', cluster: 'edge' },
    static_resources: { listeners: [{ name: 'in' }], clusters: [{ name: 'one' }, { name: 'two' }] },
  });
});

test('a oneof member set in the overlay clears the other; the same member merges', () => {
  const address = type('envoy.config.core.v3.SocketAddress');
  assert.deepEqual(mergeMessage(address, { address: '::', port_value: 80 }, { named_port: 'http' }), { address: '::', named_port: 'http' });
  // A oneof member has presence: port 0 set in the overlay is copied.
  assert.deepEqual(mergeMessage(address, { port_value: 80 }, { port_value: 0 }), { port_value: 0 });
  const cluster = type(CLUSTER);
  assert.deepEqual(mergeMessage(cluster, { name: 'c', type: 'STATIC' }, { cluster_type: { name: 'x' } }), { name: 'c', cluster_type: { name: 'x' } });
  const lb = { ring_hash_lb_config: { minimum_ring_size: '16' } };
  assert.deepEqual(mergeMessage(cluster, lb, { ring_hash_lb_config: { hash_function: 'MURMUR_HASH_2' } }), {
    ring_hash_lb_config: { minimum_ring_size: '16', hash_function: 'MURMUR_HASH_2' },
  });
});

test('maps take the overlay entries by key, each replaced whole', () => {
  const cluster = type(CLUSTER);
  const any = (type: string, fields: JsonObject = {}) => ({ '@type': `type.googleapis.com/${type}`, ...fields });
  const base = { typed_extension_protocol_options: { a: any('A', { x: 1 }), b: any('B') } };
  const overlay = { typed_extension_protocol_options: { a: any('A', { y: 2 }), c: any('C') } };
  assert.deepEqual(mergeMessage(cluster, base, overlay), {
    typed_extension_protocol_options: { a: any('A', { y: 2 }), b: any('B'), c: any('C') },
  });
});

test('an Any is replaced whole; an empty one copies nothing', () => {
  const any = type('google.protobuf.Any');
  const base = { '@type': 'type.googleapis.com/A', x: 1 };
  assert.deepEqual(mergeMessage(any, base, { '@type': 'type.googleapis.com/A', y: 2 }), { '@type': 'type.googleapis.com/A', y: 2 });
  assert.deepEqual(mergeMessage(any, base, {}), base);
});

test('well-known types merge as their fields do', () => {
  const cluster = type(CLUSTER);
  // A wrapper set to its default copies nothing (its value is a proto3 scalar).
  assert.deepEqual(mergeMessage(cluster, { per_connection_buffer_limit_bytes: 1000 }, { per_connection_buffer_limit_bytes: 0 }), { per_connection_buffer_limit_bytes: 1000 });
  assert.deepEqual(mergeMessage(cluster, { per_connection_buffer_limit_bytes: 1000 }, { per_connection_buffer_limit_bytes: 5 }), { per_connection_buffer_limit_bytes: 5 });
  // Seconds and nanos are copied apart, each when not zero.
  assert.deepEqual(mergeMessage(cluster, { connect_timeout: '0.250s' }, { connect_timeout: '5s' }), { connect_timeout: '5.250s' });
  assert.deepEqual(mergeMessage(cluster, { connect_timeout: '2.250s' }, { connect_timeout: '0.500s' }), { connect_timeout: '2.500s' });
  // A Struct is a map of Values: entries replace by key; a map of Structs replaces each whole.
  const node = type('envoy.config.core.v3.Node');
  assert.deepEqual(mergeMessage(node, { metadata: { a: { x: 1 }, b: [1] } }, { metadata: { a: { y: 2 } } }), { metadata: { a: { y: 2 }, b: [1] } });
  const metadata = type('envoy.config.core.v3.Metadata');
  assert.deepEqual(
    mergeMessage(metadata, { filter_metadata: { f: { a: 1, b: 2 }, g: { c: 3 } } }, { filter_metadata: { f: { a: 9 } } }),
    { filter_metadata: { f: { a: 9 }, g: { c: 3 } } },
  );
});

test('the inputs are not modified', () => {
  const base = { node: { id: 'a' }, static_resources: { clusters: [{ name: 'one' }] } };
  const overlay = { node: { cluster: 'c' }, static_resources: { clusters: [{ name: 'two' }] } };
  const [baseText, overlayText] = [JSON.stringify(base), JSON.stringify(overlay)];
  mergeMessage(schema.bootstrap, base, overlay);
  assert.equal(JSON.stringify(base), baseText);
  assert.equal(JSON.stringify(overlay), overlayText);
});
