// RTDS in the supervisor: what a Runtime resource must be to become a layer's values, and an
// rtds_layer's subscription feeding the runtime loader over a real management server (its own
// gRPC stream, v3 and v2, and REST): updates reload the runtime, a bad one is NACKed with the
// field at fault and the layer keeps its values, and the first update or failure ends
// initialization.

import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { ApiConfigSource, ConfigSourceConfig, XdsApiVersion } from '../../src/config/config_source';
import { FieldError } from '../../src/config/errors';
import type { RtdsRuntimeLayer, RuntimeLayerConfig } from '../../src/config/model';
import { protoSchema } from '../../src/config/schema';
import type { DecodedResource } from '../../src/config/xds/subscription';
import { RtdsLayers } from '../../src/runtime/rtds_layers';
import { rtdsLayerValues } from '../../src/runtime/rtds_resource';
import type { RuntimeValues } from '../../src/runtime/runtime';
import { RuntimeLoader } from '../../src/runtime/runtime_loader';
import { runtimeStats } from '../../src/runtime/runtime_stats';
import { createHeapStatsStore } from '../../src/stats/store';
import { silentLogger } from '../helpers/data_plane';
import { giveUpAfter, waitFor } from '../helpers/proxy_process';
import { subscriptionFactory } from '../helpers/subscriptions';
import { XdsServer } from '../helpers/xds_server';

const RUNTIME_V3 = 'type.googleapis.com/envoy.service.runtime.v3.Runtime';
const RUNTIME_V2 = 'type.googleapis.com/envoy.service.discovery.v2.Runtime';

function decoded(name: string, layer?: Record<string, unknown>): DecodedResource {
  return { name, resource: layer === undefined ? { name } : { name, layer } } as DecodedResource;
}

function fieldError(path: string, reason: RegExp): (e: unknown) => boolean {
  return (e) => e instanceof FieldError && e.fieldPath === path && reason.test(e.reason);
}

test('a Runtime resource: its layer flattened as a static layer; one resource of the layer name, a runtime value in each leaf', () => {
  const schema = protoSchema();
  assert.deepEqual(
    new Map(rtdsLayerValues(schema, [decoded('flags', { routing: { to_a: 25 }, pct: { numerator: 5 }, on: true, s: 'x' })], 'flags')),
    new Map([
      ['routing.to_a', '25'],
      ['pct', 'numerator: 5'],
      ['on', 'true'],
      ['s', 'x'],
    ]),
  );
  // No layer is an empty one.
  assert.deepEqual(rtdsLayerValues(schema, [decoded('flags')], 'flags'), []);
  assert.throws(() => rtdsLayerValues(schema, [], 'flags'), /^Error: Unexpected RTDS resource length: 0$/);
  assert.throws(() => rtdsLayerValues(schema, [decoded('flags'), decoded('flags')], 'flags'), /Unexpected RTDS resource length: 2/);
  assert.throws(() => rtdsLayerValues(schema, [decoded('other')], 'flags'), fieldError('resources[0].name', /^Unexpected RTDS runtime \(expecting flags\): other$/));
  assert.throws(() => rtdsLayerValues(schema, [decoded('flags', { routing: { to_a: [1] } })], 'flags'), fieldError('resources[0].layer.routing.to_a', /^Invalid runtime entry value for routing\.to_a$/));
  assert.throws(() => rtdsLayerValues(schema, [decoded('flags', { off: null })], 'flags'), fieldError('resources[0].layer.off', /Invalid runtime entry value for off/));
});

function grpcApi(transport: XdsApiVersion): ApiConfigSource {
  return {
    apiType: 'GRPC',
    transportApiVersion: transport,
    grpcServices: [{ kind: 'envoy_grpc', clusterName: 'xds_cluster' }],
    clusterNames: [],
    refreshDelayMs: 0,
    requestTimeoutMs: 1000,
    setNodeOnFirstMessageOnly: false,
  };
}

interface Harness {
  readonly server: XdsServer;
  readonly store: ReturnType<typeof createHeapStatsStore>;
  readonly loader: RuntimeLoader;
  readonly rtds: RtdsLayers;
  /** Every final map the loader handed on, in order. */
  readonly changes: RuntimeValues[];
}

/** A loader of a static layer `base`, the RTDS layer `dyn` (resource `flags` from `source`) and an admin layer. */
async function harness(t: TestContext, source: (server: XdsServer) => ConfigSourceConfig, prepare: (server: XdsServer) => void): Promise<Harness> {
  const server = await XdsServer.start();
  prepare(server);
  const store = createHeapStatsStore();
  const factory = subscriptionFactory(store, silentLogger, 'warn', {
    clusterAddresses: (name) =>
      name === 'xds_cluster' ? [{ address: '127.0.0.1', port: server.port }] : name === 'rest_cluster' ? [{ address: '127.0.0.1', port: server.restPort }] : [],
  });
  const rtdsLayer: RtdsRuntimeLayer = { kind: 'rtds', name: 'dyn', resourceName: 'flags', source: source(server) };
  const layers: RuntimeLayerConfig[] = [{ kind: 'static', name: 'base', values: [['k', 'static'], ['s', '1']] }, rtdsLayer, { kind: 'admin', name: 'admin' }];
  const changes: RuntimeValues[] = [];
  const loader = new RuntimeLoader({ layers, serviceCluster: '', stats: runtimeStats(store), log: silentLogger, onChange: (values) => changes.push(values), pollIntervalMs: 60_000 });
  const rtds = new RtdsLayers(layers, { subscriptions: factory, schema: protoSchema(), runtime: loader, rootScope: store, log: silentLogger });
  t.after(async () => {
    rtds.close();
    loader.close();
    factory.close();
    await server.close();
  });
  rtds.start();
  return { server, store, loader, rtds, changes };
}

function values(loader: RuntimeLoader): Map<string, string> {
  return new Map(loader.values());
}

for (const transport of ['V3', 'V2'] as const) {
  test(`gRPC ${transport}: the first update ends initialization and overrides the static layer; a bad one is NACKed by path and the values stay`, { timeout: 30_000 }, async (t) => {
    const url = transport === 'V3' ? RUNTIME_V3 : RUNTIME_V2;
    const h = await harness(
      t,
      () => ({ kind: 'api', api: grpcApi(transport), initialFetchTimeoutMs: 0, resourceApiVersion: transport }),
      (server) => server.setResources(url, 'r1', [{ '@type': url, name: 'flags', layer: { k: 'rtds', nested: { a: 1 } } }]),
    );
    await Promise.race([h.rtds.initialized, giveUpAfter(20_000).then(() => assert.fail('RTDS never initialized'))]);
    assert.deepEqual(values(h.loader), new Map([['k', 'rtds'], ['s', '1'], ['nested.a', '1']]));
    assert.deepEqual(h.loader.layers().map((l) => l.name), ['base', 'dyn', 'admin']);
    const first = h.server.requests[0]!;
    assert.equal(first.path, `/envoy.service.${transport === 'V3' ? 'runtime.v3' : 'discovery.v2'}.RuntimeDiscoveryService/StreamRuntime`);
    assert.equal(first.type_url, url);
    assert.deepEqual(first.resource_names, ['flags']);
    await waitFor('the ACK of r1', () => h.server.requests.find((r) => r.version_info === 'r1' && r.error_detail === null));
    // Envoy 1.16's scope for RTDS subscription stats is the root one.
    assert.equal(h.store.counter('update_success').value(), 1);
    assert.equal(h.store.gauge('runtime.num_layers').value(), 3);
    assert.equal(h.store.gauge('runtime.num_keys').value(), 3);

    h.server.setResources(url, 'r2', [{ '@type': url, name: 'flags', layer: { k: { bad: [true] } } }]);
    const nack = await waitFor('the NACK of r2', () => h.server.requests.find((r) => r.error_detail !== null), 20_000);
    assert.equal(nack.version_info, 'r1', 'a NACK carries the version still applied');
    assert.equal(nack.error_detail!.code, 13);
    assert.match(nack.error_detail!.message, /resources\[0\]\.layer\.k\.bad: Invalid runtime entry value for k\.bad/);
    assert.equal(h.store.counter('update_rejected').value(), 1);
    assert.equal(values(h.loader).get('k'), 'rtds', 'the rejected layer leaves the values as they were');

    const changesBefore = h.changes.length;
    h.server.setResources(url, 'r3', [{ '@type': url, name: 'flags', layer: {} }]);
    await waitFor('r3 applied', () => (h.changes.length > changesBefore ? true : undefined), 20_000);
    // An empty layer leaves what the layers below it say.
    assert.deepEqual(values(h.loader), new Map([['k', 'static'], ['s', '1']]));
    assert.equal(h.store.counter('update_success').value(), 2);
  });
}

test('REST: the layer polled at /v3/discovery:runtime', { timeout: 30_000 }, async (t) => {
  const api: ApiConfigSource = { ...grpcApi('V3'), apiType: 'REST', grpcServices: [], clusterNames: ['rest_cluster'], refreshDelayMs: 200 };
  const h = await harness(
    t,
    () => ({ kind: 'api', api, initialFetchTimeoutMs: 0, resourceApiVersion: 'V3' }),
    (server) => server.setResources(RUNTIME_V3, 'v1', [{ '@type': RUNTIME_V3, name: 'flags', layer: { k: 'rest' } }]),
  );
  await Promise.race([h.rtds.initialized, giveUpAfter(20_000).then(() => assert.fail('RTDS never initialized'))]);
  assert.equal(values(h.loader).get('k'), 'rest');
  assert.equal(h.server.requests[0]!.path, '/v3/discovery:runtime');
  h.server.setResources(RUNTIME_V3, 'v2', [{ '@type': RUNTIME_V3, name: 'flags', layer: { k: 'polled' } }]);
  await waitFor('the next poll applied', () => (values(h.loader).get('k') === 'polled' ? true : undefined), 20_000);
});

test('initial_fetch_timeout: initialization ends without an update; the layer is there, empty, and fills in later', { timeout: 30_000 }, async (t) => {
  const h = await harness(t, () => ({ kind: 'api', api: grpcApi('V3'), initialFetchTimeoutMs: 300, resourceApiVersion: 'V3' }), () => undefined);
  await Promise.race([h.rtds.initialized, giveUpAfter(20_000).then(() => assert.fail('RTDS never initialized'))]);
  assert.equal(h.store.counter('init_fetch_timeout').value(), 1);
  assert.deepEqual(h.loader.layers().map((l) => [l.name, l.values.length]), [['base', 2], ['dyn', 0], ['admin', 0]]);
  h.server.setResources(RUNTIME_V3, 'late', [{ '@type': RUNTIME_V3, name: 'flags', layer: { k: 'late' } }]);
  await waitFor('the late update applied', () => (values(h.loader).get('k') === 'late' ? true : undefined), 20_000);
});
