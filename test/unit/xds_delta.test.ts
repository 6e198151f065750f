// The delta xDS client (DELTA_GRPC, per type and over ADS) against the test management server on
// loopback: what it subscribes to, ACKs and NACKs (field paths, the held set kept), removals,
// initial_resource_versions on a new stream, unsubscribing, statistics, V2 transport.

import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { FieldError } from '../../src/config/errors';
import type { JsonObject } from '../../src/config/json';
import type { ApiConfigSource, ConfigSourceConfig, XdsApiVersion } from '../../src/config/config_source';
import { CLUSTER_RESOURCE, ENDPOINT_RESOURCE, type ResourceType } from '../../src/config/xds/resource_types';
import { SubscriptionStats, type DecodedResource } from '../../src/config/xds/subscription';
import { versionHash } from '../../src/config/xds/version_hash';
import { createHeapStatsStore } from '../../src/stats/store';
import { silentLogger } from '../helpers/data_plane';
import { ManualClock } from '../helpers/manual_clock';
import { waitFor } from '../helpers/proxy_process';
import { subscriptionFactory, type SubscriptionFactoryOverrides } from '../helpers/subscriptions';
import type { RecordedDeltaRequest } from '../helpers/xds_delta_streams';
import { XdsServer } from '../helpers/xds_server';

const CLA_V3 = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
const CLA_V2 = 'type.googleapis.com/envoy.api.v2.ClusterLoadAssignment';
const CLUSTER_V3 = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const DELTA_EDS_V3 = '/envoy.service.endpoint.v3.EndpointDiscoveryService/DeltaEndpoints';
const DELTA_ADS_V3 = '/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources';

function assignment(cluster: string, port: number, url = CLA_V3): JsonObject {
  return {
    '@type': url,
    cluster_name: cluster,
    endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }],
  };
}

function edsCluster(name: string): JsonObject {
  return { '@type': CLUSTER_V3, name, type: 'EDS', eds_cluster_config: { eds_config: { ads: {} } } };
}

function deltaApi(transport: XdsApiVersion = 'V3', setNodeOnFirstMessageOnly = false): ApiConfigSource {
  return {
    apiType: 'DELTA_GRPC',
    transportApiVersion: transport,
    grpcServices: [{ kind: 'envoy_grpc', clusterName: 'xds_cluster' }],
    clusterNames: [],
    refreshDelayMs: 0,
    requestTimeoutMs: 1000,
    setNodeOnFirstMessageOnly,
  };
}

/** One update as the subscriber saw it: each resource's name with its port (EDS) or type (CDS), and its version. */
interface SeenUpdate {
  readonly resources: Record<string, string>;
  readonly version: string;
}

function describeResource(r: DecodedResource): string {
  const lb = (r.resource['endpoints'] as JsonObject[] | undefined)?.[0]?.['lb_endpoints'] as JsonObject[] | undefined;
  const address = (lb?.[0]?.['endpoint'] as { address?: { socket_address?: { port_value?: number } } } | undefined)?.address;
  return `${String(address?.socket_address?.port_value ?? r.resource['type'] ?? '')}@${r.version ?? ''}`;
}

interface Subscribed {
  readonly stats: SubscriptionStats;
  readonly updates: SeenUpdate[];
  readonly rejections: string[];
  /** Set to make the subscriber throw this FieldError on its next updates. */
  reject: FieldError | null;
  close(): void;
}

async function harness(t: TestContext, overrides: SubscriptionFactoryOverrides = {}) {
  const server = await XdsServer.start();
  const store = createHeapStatsStore();
  const factory = subscriptionFactory(store, silentLogger, 'warn', {
    clusterAddresses: (name) => (name === 'xds_cluster' ? [{ address: '127.0.0.1', port: server.port }] : []),
    ...overrides,
  });
  const closers: Array<() => void> = [];
  t.after(async () => {
    for (const close of closers) close();
    factory.close();
    await server.close();
  });
  const subscribe = (source: ConfigSourceConfig, type: ResourceType, names: readonly string[], scope: string): Subscribed => {
    const stats = new SubscriptionStats(store.scope(scope));
    const subscribed: Subscribed = {
      stats,
      updates: [],
      rejections: [],
      reject: null,
      close: () => subscription.close(),
    };
    const subscription = factory.subscribe(
      source,
      type,
      {
        onConfigUpdate(resources, version) {
          if (subscribed.reject !== null) throw subscribed.reject;
          subscribed.updates.push({ resources: Object.fromEntries(resources.map((r) => [r.name, describeResource(r)])), version });
        },
        onConfigUpdateFailed(reason, error) {
          if (reason === 'update_rejected') subscribed.rejections.push(error?.message ?? '');
        },
      },
      stats,
    );
    closers.push(() => subscription.close());
    subscription.start(names);
    return subscribed;
  };
  const requestWhere = (what: string, match: (r: RecordedDeltaRequest) => boolean) => waitFor(what, () => server.delta.requests.find(match), 20_000);
  return { server, store, subscribe, requestWhere };
}

const perTypeEds = (api = deltaApi()): ConfigSourceConfig => ({ kind: 'api', api, initialFetchTimeoutMs: 0, resourceApiVersion: api.transportApiVersion === 'V2' ? 'V2' : 'V3' });

test('delta EDS: subscribes by name, takes only changes, ACKs with the nonce; a NACK names the field and keeps the held set', { timeout: 30_000 }, async (t) => {
  const h = await harness(t);
  h.server.setResources(CLA_V3, '1', [assignment('backend', 1001), assignment('other', 1002), assignment('unwanted', 1003)]);
  const eds = h.subscribe(perTypeEds(), ENDPOINT_RESOURCE, ['backend', 'other'], 'cluster.backend');

  const first = await h.requestWhere('the first request', () => true);
  assert.equal(first.path, DELTA_EDS_V3);
  assert.equal(first.type_url, CLA_V3);
  assert.deepEqual([...first.resource_names_subscribe].sort(), ['backend', 'other']);
  assert.deepEqual(first.initial_resource_versions, {});
  assert.equal(first.response_nonce, '');
  assert.equal(first.node?.['id'], 'test-node');

  const ack1 = await h.requestWhere('the ACK', (r) => r.response_nonce !== '');
  assert.equal(ack1.error_detail, null);
  assert.equal(ack1.response_nonce, h.server.delta.responses[0]!.nonce);
  assert.deepEqual(ack1.resource_names_subscribe, []);
  assert.deepEqual(eds.updates, [{ resources: { backend: '1001@1', other: '1002@1' }, version: '1' }]);
  assert.equal(h.store.gauge('control_plane.connected_state').value(), 1);

  // Only the changed resource travels; the subscriber still gets the whole set it names.
  h.server.setResources(CLA_V3, '2', [assignment('backend', 2001), assignment('other', 1002), assignment('unwanted', 1003)]);
  await h.requestWhere('the ACK of 2', (r) => r.response_nonce === h.server.delta.responses[1]?.nonce);
  assert.deepEqual(h.server.delta.responses[1]!.resources, [{ name: 'backend', version: '2' }]);
  assert.deepEqual(eds.updates[1], { resources: { backend: '2001@2', other: '1002@1' }, version: '2' });

  // Rejected: NACKed with the nonce, code 13 and the field path; the set stays as it was.
  eds.reject = new FieldError('endpoints[0].lb_endpoints[0]', 'port_value: out of range');
  h.server.setResources(CLA_V3, '3', [assignment('backend', 3001), assignment('other', 1002), assignment('unwanted', 1003)]);
  const nack = await h.requestWhere('the NACK', (r) => r.error_detail !== null);
  assert.equal(nack.response_nonce, h.server.delta.responses[2]!.nonce);
  assert.deepEqual(nack.error_detail, { code: 13, message: 'endpoints[0].lb_endpoints[0]: port_value: out of range' });
  assert.deepEqual(eds.rejections, ['endpoints[0].lb_endpoints[0]: port_value: out of range']);
  eds.reject = null;
  h.server.setResources(CLA_V3, '4', [assignment('backend', 3001), assignment('other', 4002), assignment('unwanted', 1003)]);
  await waitFor('update 4', () => (eds.updates.length === 3 ? true : undefined));
  // backend is what was held before the NACK (the server believes it sent 3001 and does not resend it).
  assert.deepEqual(eds.updates[2], { resources: { backend: '2001@2', other: '4002@4' }, version: '4' });

  // update_attempt: the first request, two accepted, one rejected, one accepted.
  assert.equal(eds.stats.update_attempt.value(), 5);
  assert.equal(eds.stats.update_success.value(), 3);
  assert.equal(eds.stats.update_rejected.value(), 1);
  assert.equal(eds.stats.version.value(), versionHash('4'));
});

test('delta EDS: a removed resource leaves the set, and its watch is told with the rest', { timeout: 30_000 }, async (t) => {
  const h = await harness(t);
  h.server.setResources(CLA_V3, '1', [assignment('backend', 1001), assignment('other', 1002)]);
  const eds = h.subscribe(perTypeEds(), ENDPOINT_RESOURCE, ['backend', 'other'], 'cluster.backend');
  await waitFor('update 1', () => (eds.updates.length === 1 ? true : undefined));
  h.server.setResources(CLA_V3, '2', [assignment('other', 1002)]);
  await waitFor('update 2', () => (eds.updates.length === 2 ? true : undefined));
  assert.deepEqual(h.server.delta.responses[1], { ...h.server.delta.responses[1]!, resources: [], removed_resources: ['backend'] });
  assert.deepEqual(eds.updates[1], { resources: { other: '1002@1' }, version: '2' });
});

test('delta: responses the protocol forbids are NACKed with the field path, before any subscriber sees them', { timeout: 30_000 }, async (t) => {
  const h = await harness(t);
  h.server.setResources(CLA_V3, '1', [assignment('backend', 1001)]);
  const eds = h.subscribe(perTypeEds(), ENDPOINT_RESOURCE, ['backend'], 'cluster.backend');
  await waitFor('update 1', () => (eds.updates.length === 1 ? true : undefined));
  const nackOf = async (send: () => void) => {
    const before = h.server.delta.responses.length;
    send();
    const nonce = h.server.delta.responses[before]!.nonce;
    return (await h.requestWhere(`the answer to ${nonce}`, (r) => r.response_nonce === nonce)).error_detail?.message;
  };
  const resource = assignment('backend', 5001);
  assert.equal(
    await nackOf(() => h.server.delta.sendResponse(CLA_V3, 'x', [{ name: 'backend', version: 'x', resource }, { name: 'backend', version: 'y', resource }])),
    'resources[1].name: duplicate name backend found among added/updated resources',
  );
  assert.equal(
    await nackOf(() => h.server.delta.sendResponse(CLA_V3, 'x', [{ name: 'backend', version: 'x', resource }], ['backend'])),
    'removed_resources[0]: duplicate name backend found in the union of added+removed resources',
  );
  assert.equal(
    await nackOf(() => h.server.delta.sendResponse(CLA_V3, 'x', [{ name: 'elsewhere', version: 'x', resource }])),
    "resources[0].name: 'elsewhere' is not the name of the resource it carries ('backend')",
  );
  assert.match(
    (await nackOf(() => h.server.delta.sendResponse(CLA_V3, 'x', [{ name: 'backend', version: 'x', resource: edsCluster('backend') }]))) ?? '',
    /^resources\[0\]\.resource: type\.googleapis\.com\/envoy\.config\.cluster\.v3\.Cluster does not match the message-wide type URL type\.googleapis\.com\/envoy\.config\.endpoint\.v3\.ClusterLoadAssignment$/,
  );
  assert.equal(eds.updates.length, 1);
  assert.equal(eds.stats.update_rejected.value(), 4);
  // The held set is intact: a change to it arrives over the version the client had.
  h.server.setResources(CLA_V3, '2', [assignment('backend', 2001)]);
  await waitFor('update 2', () => (eds.updates.length === 2 ? true : undefined));
  assert.deepEqual(eds.updates[1], { resources: { backend: '2001@2' }, version: '2' });
});

test('delta ADS: CDS subscribes as a wildcard, EDS by name, on one stream; a removed cluster goes through removed_resources; the node on the first request only', { timeout: 30_000 }, async (t) => {
  const h = await harness(t, { adsConfig: deltaApi('V3', true) });
  h.server.setResources(CLUSTER_V3, 'c1', [edsCluster('a'), edsCluster('b')]);
  h.server.setResources(CLA_V3, 'e1', [assignment('a', 1001)]);
  const ads: ConfigSourceConfig = { kind: 'ads', initialFetchTimeoutMs: 0, resourceApiVersion: 'V3' };
  const cds = h.subscribe(ads, CLUSTER_RESOURCE, [], 'cluster_manager.cds');
  const eds = h.subscribe(ads, ENDPOINT_RESOURCE, ['a'], 'cluster.a');

  const cdsFirst = await h.requestWhere('the CDS request', (r) => r.type_url === CLUSTER_V3);
  assert.deepEqual(cdsFirst.resource_names_subscribe, []);
  const edsFirst = await h.requestWhere('the EDS request', (r) => r.type_url === CLA_V3);
  assert.deepEqual(edsFirst.resource_names_subscribe, ['a']);
  await waitFor('both updates', () => (cds.updates.length === 1 && eds.updates.length === 1 ? true : undefined));
  assert.deepEqual(cds.updates[0], { resources: { a: 'EDS@c1', b: 'EDS@c1' }, version: 'c1' });
  assert.deepEqual(eds.updates[0], { resources: { a: '1001@e1' }, version: 'e1' });
  assert.ok(h.server.delta.requests.every((r) => r.stream === 1 && r.path === DELTA_ADS_V3));
  assert.equal(h.server.delta.requests[0]!.node?.['id'], 'test-node');
  await h.requestWhere('the EDS ACK', (r) => r.type_url === CLA_V3 && r.response_nonce !== '');
  assert.ok(h.server.delta.requests.slice(1).every((r) => r.node === null));

  h.server.setResources(CLUSTER_V3, 'c2', [edsCluster('a')]);
  await waitFor('the CDS update', () => (cds.updates.length === 2 ? true : undefined));
  assert.deepEqual(h.server.delta.responses.at(-1)!.removed_resources, ['b']);
  assert.deepEqual(cds.updates[1], { resources: { a: 'EDS@c1' }, version: 'c2' });
  // EDS was not concerned.
  assert.equal(eds.updates.length, 1);

  // The EDS subscription closes: the server hears the name is no longer wanted.
  eds.close();
  const unsubscribe = await h.requestWhere('the unsubscribe', (r) => r.resource_names_unsubscribe.length > 0);
  assert.equal(unsubscribe.type_url, CLA_V3);
  assert.deepEqual(unsubscribe.resource_names_unsubscribe, ['a']);
});

test('delta: a dropped stream is opened again after the backoff, stating each type with the versions it holds', { timeout: 30_000 }, async (t) => {
  const clock = new ManualClock();
  const h = await harness(t, { clock, random: () => 1234, adsConfig: deltaApi() });
  h.server.setResources(CLUSTER_V3, 'c1', [edsCluster('a'), edsCluster('b')]);
  h.server.setResources(CLA_V3, 'e1', [assignment('a', 1001)]);
  const ads: ConfigSourceConfig = { kind: 'ads', initialFetchTimeoutMs: 0, resourceApiVersion: 'V3' };
  const cds = h.subscribe(ads, CLUSTER_RESOURCE, [], 'cluster_manager.cds');
  const eds = h.subscribe(ads, ENDPOINT_RESOURCE, ['a', 'missing'], 'cluster.a');
  await h.requestWhere('the EDS ACK', (r) => r.type_url === CLA_V3 && r.response_nonce !== '');
  await h.requestWhere('the CDS ACK', (r) => r.type_url === CLUSTER_V3 && r.response_nonce !== '');

  h.server.dropStreams();
  await waitFor('connected_state 0', () => (h.store.gauge('control_plane.connected_state').value() === 0 ? true : undefined));
  assert.equal(cds.stats.update_failure.value(), 1);
  assert.equal(eds.stats.update_failure.value(), 1);
  assert.deepEqual(clock.pendingDelays(), [234]);
  clock.advance(234);

  const cdsAgain = await h.requestWhere('the CDS resubscription', (r) => r.stream === 2 && r.type_url === CLUSTER_V3);
  assert.deepEqual(cdsAgain.resource_names_subscribe, []);
  assert.deepEqual(cdsAgain.initial_resource_versions, { a: 'c1', b: 'c1' });
  const edsAgain = await h.requestWhere('the EDS resubscription', (r) => r.stream === 2 && r.type_url === CLA_V3);
  // Every name wanted, those never received too; versions only of those held.
  assert.deepEqual([...edsAgain.resource_names_subscribe].sort(), ['a', 'missing']);
  assert.deepEqual(edsAgain.initial_resource_versions, { a: 'e1' });
  assert.equal(edsAgain.response_nonce, '');

  // The server had nothing newer: nothing is delivered again; a change still is.
  h.server.setResources(CLA_V3, 'e2', [assignment('a', 2001)]);
  await waitFor('update e2', () => (eds.updates.length === 2 ? true : undefined));
  assert.deepEqual(eds.updates.map((u) => u.version), ['e1', 'e2']);
  assert.equal(cds.updates.length, 2);
  assert.deepEqual(cds.updates[1], { resources: { a: 'EDS@c1', b: 'EDS@c1' }, version: 'c1' });
});

test('delta V2 transport: the v2 delta service and v2 type URLs; v2 resources read as v3', { timeout: 30_000 }, async (t) => {
  const h = await harness(t);
  h.server.setResources(CLA_V2, 'v2-1', [assignment('backend', 1001, CLA_V2)]);
  const eds = h.subscribe(perTypeEds(deltaApi('V2')), ENDPOINT_RESOURCE, ['backend'], 'cluster.backend');
  const ack = await h.requestWhere('the ACK', (r) => r.response_nonce !== '');
  assert.equal(ack.path, '/envoy.api.v2.EndpointDiscoveryService/DeltaEndpoints');
  assert.equal(ack.type_url, CLA_V2);
  assert.deepEqual(eds.updates, [{ resources: { backend: '1001@v2-1' }, version: 'v2-1' }]);
});
