// ResourceDecoder: a response's resources are decoded in slices that let the event loop turn,
// with the paths of errors and unknown fields those of the whole response (`resources[i]...`),
// from JSON (files, REST) as from a binary gRPC payload.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FieldError } from '../../src/config/errors';
import type { JsonObject } from '../../src/config/json';
import { protoSchema } from '../../src/config/schema';
import { DiscoveryWire } from '../../src/config/xds/discovery_wire';
import { ResourceDecoder, type UnknownDynamicFields } from '../../src/config/xds/resource_decoder';
import { CLUSTER_RESOURCE } from '../../src/config/xds/resource_types';
import { createHeapStatsStore } from '../../src/stats/store';
import { silentLogger } from '../helpers/data_plane';
import { turnsDuring } from '../helpers/event_loop_turns';

const CLUSTER_TYPE = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const schema = protoSchema();

function decoder(policy: UnknownDynamicFields) {
  const unknown = createHeapStatsStore().counter('server.dynamic_unknown_fields');
  return { decoder: new ResourceDecoder(schema, policy, unknown, silentLogger), unknown };
}

const cluster = (i: number, extra: JsonObject = {}): JsonObject => ({ '@type': CLUSTER_TYPE, name: `c${i}`, connect_timeout: '1s', ...extra });

/** A binary DiscoveryResponse of clusters; `withUnknown` gets field 999 appended to its Cluster. */
function binaryResponse(count: number, withUnknown: number): Uint8Array {
  const clusterType = schema.root.lookupType('envoy.config.cluster.v3.Cluster');
  const responseType = schema.root.lookupType('envoy.service.discovery.v3.DiscoveryResponse');
  const resources = Array.from({ length: count }, (_, i) => {
    const bytes = clusterType.encode(clusterType.fromObject({ name: `c${i}` })).finish();
    // Field 999, varint 1: a field this schema does not know.
    const value = i === withUnknown ? Buffer.concat([bytes, Buffer.from([0xb8, 0x3e, 0x01])]) : bytes;
    return { type_url: CLUSTER_TYPE, value };
  });
  return responseType.encode(responseType.fromObject({ version_info: 'v', type_url: CLUSTER_TYPE, resources })).finish();
}

test('JSON: 1,000 resources are decoded in slices, in order; an unknown field far down is reported at its path', async () => {
  const { decoder: warn, unknown } = decoder('warn');
  const resources = Array.from({ length: 1000 }, (_, i) => cluster(i, i === 700 ? { surprise: 1 } : {}));
  const { result, turns } = await turnsDuring(() => warn.decode({ version_info: 'v', resources }, CLUSTER_RESOURCE));
  assert.ok(turns >= 2, `the event loop turned ${turns} times`);
  assert.deepEqual(
    result.resources.map((r) => r.name),
    resources.map((r) => r['name']),
  );
  assert.equal(result.versionInfo, 'v');
  assert.equal(unknown.value(), 1);

  const { decoder: reject } = decoder('reject');
  await assert.rejects(reject.decode({ version_info: 'v', resources }, CLUSTER_RESOURCE), (error: unknown) => {
    assert.ok(error instanceof FieldError);
    assert.equal(error.fieldPath, 'resources[700].surprise');
    return true;
  });
  // The envelope is checked as a whole: resources that are neither a list nor one resource are refused by path.
  await assert.rejects(reject.decode({ version_info: 'v', resources: 7 }, CLUSTER_RESOURCE), new FieldError('resources', 'expected an object, got 7'));
});

test('binary: 1,000 resources are decoded in slices; an unknown field is reported, or refused, at its path', async () => {
  const wire = new DiscoveryWire(schema);
  const bytes = binaryResponse(1000, 600);
  const { decoder: warn, unknown } = decoder('warn');
  const { result, turns } = await turnsDuring(() => warn.decodeParts(wire.decodeResponse(bytes, true), CLUSTER_RESOURCE));
  assert.ok(turns >= 2, `the event loop turned ${turns} times`);
  assert.equal(result.resources.length, 1000);
  assert.equal(result.resources[999]!.name, 'c999');
  assert.equal(unknown.value(), 1);

  const { decoder: reject } = decoder('reject');
  await assert.rejects(reject.decodeParts(wire.decodeResponse(bytes, false), CLUSTER_RESOURCE), (error: unknown) => {
    assert.ok(error instanceof FieldError);
    assert.equal(error.fieldPath, 'resources[600].#999');
    return true;
  });
});
