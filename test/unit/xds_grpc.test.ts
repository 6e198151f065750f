import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { FieldError } from '../../src/config/errors';
import type { JsonObject } from '../../src/config/json';
import type { ApiConfigSource, ConfigSourceConfig, XdsApiVersion } from '../../src/config/config_source';
import { CLUSTER_RESOURCE, ENDPOINT_RESOURCE, type ResourceType } from '../../src/config/xds/resource_types';
import { SubscriptionStats, type ConfigUpdateFailureReason, type DecodedResource } from '../../src/config/xds/subscription';
import type { SubscriptionFactory } from '../../src/config/xds/subscription_factory';
import { versionHash } from '../../src/config/xds/version_hash';
import { createHeapStatsStore } from '../../src/stats/store';
import { silentLogger } from '../helpers/data_plane';
import { ManualClock } from '../helpers/manual_clock';
import { waitFor } from '../helpers/proxy_process';
import { subscriptionFactory, type SubscriptionFactoryOverrides } from '../helpers/subscriptions';
import { type RecordedRequest, XdsServer } from '../helpers/xds_server';

const CLA_V3 = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
const CLA_V2 = 'type.googleapis.com/envoy.api.v2.ClusterLoadAssignment';
const CLUSTER_V3 = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const EDS_V3_PATH = '/envoy.service.endpoint.v3.EndpointDiscoveryService/StreamEndpoints';
const ADS_V3_PATH = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';

function assignment(cluster: string, port: number, url = CLA_V3): JsonObject {
  return {
    '@type': url,
    cluster_name: cluster,
    endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }],
  };
}

function grpcApi(transport: XdsApiVersion = 'V3', setNodeOnFirstMessageOnly = false): ApiConfigSource {
  return {
    apiType: 'GRPC',
    transportApiVersion: transport,
    grpcServices: [{ kind: 'envoy_grpc', clusterName: 'xds_cluster' }],
    clusterNames: [],
    refreshDelayMs: 0,
    requestTimeoutMs: 1000,
    setNodeOnFirstMessageOnly,
  };
}

interface Recorder {
  readonly updates: Array<{ names: string[]; version: string }>;
  readonly failures: Array<{ reason: ConfigUpdateFailureReason; message: string }>;
  reject: string | null;
  /** Returned by the next updates: the subscriber is still applying them until it settles. */
  applying: Promise<void> | null;
}

interface Harness {
  readonly server: XdsServer;
  readonly factory: SubscriptionFactory;
  readonly store: ReturnType<typeof createHeapStatsStore>;
  subscribe(source: ConfigSourceConfig, type: ResourceType, names: readonly string[], scope?: string): { stats: SubscriptionStats; recorder: Recorder };
}

async function harness(t: TestContext, overrides: SubscriptionFactoryOverrides = {}): Promise<Harness> {
  const server = await XdsServer.start();
  const store = createHeapStatsStore();
  const factory = subscriptionFactory(store, silentLogger, 'warn', {
    clusterAddresses: (name) =>
      name === 'xds_cluster' ? [{ address: '127.0.0.1', port: server.port }] : name === 'rest_cluster' ? [{ address: '127.0.0.1', port: server.restPort }] : [],
    ...overrides,
  });
  const closers: Array<() => void> = [];
  t.after(async () => {
    for (const close of closers) close();
    factory.close();
    await server.close();
  });
  return {
    server,
    factory,
    store,
    subscribe(source, type, names, scope = 'cluster.backend') {
      const stats = new SubscriptionStats(store.scope(scope));
      const recorder: Recorder = { updates: [], failures: [], reject: null, applying: null };
      const subscription = factory.subscribe(
        source,
        type,
        {
          onConfigUpdate(resources: readonly DecodedResource[], version) {
            if (recorder.reject !== null) throw new FieldError('endpoints[0].lb_endpoints[0]', recorder.reject);
            recorder.updates.push({ names: resources.map((r) => r.name), version });
            return recorder.applying ?? undefined;
          },
          onConfigUpdateFailed(reason, error) {
            recorder.failures.push({ reason, message: error?.message ?? '' });
          },
        },
        stats,
      );
      closers.push(() => subscription.close());
      subscription.start(names);
      return { stats, recorder };
    },
  };
}

function requestWhere(server: XdsServer, what: string, match: (r: RecordedRequest) => boolean): Promise<RecordedRequest> {
  return waitFor(what, () => server.requests.find(match), 20_000);
}

function gauge(store: ReturnType<typeof createHeapStatsStore>, name: string): number {
  return store.gauge(name).value();
}

test('gRPC EDS: the first request carries the node; an accepted response is ACKed with its version and nonce, a rejected one NACKed with the previous version, the nonce and the field path', { timeout: 30_000 }, async (t) => {
  const h = await harness(t);
  h.server.setResources(CLA_V3, '1', [assignment('backend', 1001), assignment('other', 1002)]);
  const { stats, recorder } = h.subscribe({ kind: 'api', api: grpcApi(), initialFetchTimeoutMs: 0, resourceApiVersion: 'V3' }, ENDPOINT_RESOURCE, ['backend']);

  const first = await requestWhere(h.server, 'the first request', () => true);
  assert.equal(first.path, EDS_V3_PATH);
  assert.equal(first.type_url, CLA_V3);
  assert.deepEqual(first.resource_names, ['backend']);
  assert.equal(first.version_info, '');
  assert.equal(first.node?.['id'], 'test-node');
  assert.equal(first.node?.['user_agent_name'], 'proxy');

  const ack = await requestWhere(h.server, 'the ACK', (r) => r.version_info === '1');
  assert.equal(ack.response_nonce, '1');
  assert.equal(ack.error_detail, null);
  // Without set_node_on_first_message_only every request carries the node.
  assert.equal(ack.node?.['id'], 'test-node');
  assert.deepEqual(recorder.updates, [{ names: ['backend'], version: '1' }]);
  assert.equal(gauge(h.store, 'control_plane.connected_state'), 1);

  recorder.reject = 'port_value: out of range';
  h.server.setResources(CLA_V3, '2', [assignment('backend', 70000)]);
  const nack = await requestWhere(h.server, 'the NACK', (r) => r.error_detail !== null);
  assert.equal(nack.version_info, '1');
  assert.equal(nack.response_nonce, '2');
  assert.equal(nack.error_detail?.code, 13);
  assert.equal(nack.error_detail?.message, 'endpoints[0].lb_endpoints[0]: port_value: out of range');
  assert.deepEqual(recorder.failures, [{ reason: 'update_rejected', message: 'endpoints[0].lb_endpoints[0]: port_value: out of range' }]);

  // update_attempt: the first request, the accepted response, the rejected one (Envoy 1.16).
  assert.equal(stats.update_attempt.value(), 3);
  assert.equal(stats.update_success.value(), 1);
  assert.equal(stats.update_rejected.value(), 1);
  assert.equal(stats.update_failure.value(), 0);
  assert.equal(stats.version.value(), versionHash('1'));

  // A resource whose type is not the response's is refused before the subscriber sees it.
  recorder.reject = null;
  h.server.setResources(CLA_V3, '3', [{ '@type': CLUSTER_V3, name: 'backend' }]);
  const mismatch = await requestWhere(h.server, 'the second NACK', (r) => r.response_nonce === '3');
  assert.equal(mismatch.version_info, '1');
  assert.match(mismatch.error_detail?.message ?? '', /^resources\[0\]: type\.googleapis\.com\/envoy\.config\.cluster\.v3\.Cluster does not match the message-wide type URL/);
  assert.equal(recorder.updates.length, 1);

  // The next good version is accepted and ACKed; the error is not sent again.
  h.server.setResources(CLA_V3, '4', [assignment('backend', 1003)]);
  const ack4 = await requestWhere(h.server, 'the ACK of 4', (r) => r.version_info === '4');
  assert.equal(ack4.error_detail, null);
  assert.equal(ack4.response_nonce, '4');
});

test('gRPC: an update applied asynchronously is ACKed once it settles; a response arriving meanwhile waits for it, then applies in order', { timeout: 30_000 }, async (t) => {
  const h = await harness(t);
  h.server.setResources(CLA_V3, '1', [assignment('backend', 1001)]);
  const { stats, recorder } = h.subscribe({ kind: 'api', api: grpcApi(), initialFetchTimeoutMs: 0, resourceApiVersion: 'V3' }, ENDPOINT_RESOURCE, ['backend']);
  let finish!: () => void;
  recorder.applying = new Promise<void>((resolve) => (finish = resolve));
  await waitFor('the first update', () => recorder.updates.length === 1 || undefined, 20_000);

  h.server.setResources(CLA_V3, '2', [assignment('backend', 1002)]);
  // Time for the second response to arrive; it must neither be delivered nor the first ACKed.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(recorder.updates, [{ names: ['backend'], version: '1' }]);
  assert.equal(h.server.requests.filter((r) => r.response_nonce !== '').length, 0);
  assert.equal(stats.update_success.value(), 0);

  recorder.applying = null;
  finish();
  await requestWhere(h.server, 'the ACK of 2', (r) => r.version_info === '2');
  assert.deepEqual(recorder.updates, [
    { names: ['backend'], version: '1' },
    { names: ['backend'], version: '2' },
  ]);
  const answers = h.server.requests.filter((r) => r.response_nonce !== '').map((r) => [r.version_info, r.response_nonce]);
  assert.deepEqual(answers, [
    ['1', '1'],
    ['2', '2'],
  ]);
  assert.equal(stats.update_success.value(), 2);
});

test('gRPC: a dropped stream sets connected_state 0, counts update_failure, reconnects after the jittered backoff and resubscribes at the last accepted version', { timeout: 30_000 }, async (t) => {
  const clock = new ManualClock();
  const h = await harness(t, { clock, random: () => 1234 });
  h.server.setResources(CLA_V3, '1', [assignment('backend', 1001)]);
  const { stats, recorder } = h.subscribe({ kind: 'api', api: grpcApi(), initialFetchTimeoutMs: 0, resourceApiVersion: 'V3' }, ENDPOINT_RESOURCE, ['backend']);
  await requestWhere(h.server, 'the ACK', (r) => r.version_info === '1');

  h.server.dropStreams();
  await waitFor('connected_state 0', () => (gauge(h.store, 'control_plane.connected_state') === 0 ? true : undefined));
  assert.equal(stats.update_failure.value(), 1);
  // The subscriber is not told: it keeps serving what it has (Envoy counts the failure only).
  assert.deepEqual(recorder.failures, []);
  // Envoy's first retry is drawn below 500 ms: 1234 % 500.
  assert.deepEqual(clock.pendingDelays(), [234]);
  assert.equal(h.server.requests.filter((r) => r.stream === 2).length, 0);

  clock.advance(234);
  const resubscription = await requestWhere(h.server, 'the resubscription', (r) => r.stream === 2);
  assert.equal(resubscription.version_info, '1');
  assert.deepEqual(resubscription.resource_names, ['backend']);
  assert.equal(resubscription.node?.['id'], 'test-node');
  assert.equal(gauge(h.store, 'control_plane.connected_state'), 1);

  // The server had nothing newer: nothing is delivered again; a new version still is.
  h.server.setResources(CLA_V3, '2', [assignment('backend', 1002)]);
  await requestWhere(h.server, 'the ACK on the new stream', (r) => r.stream === 2 && r.version_info === '2');
  assert.deepEqual(
    recorder.updates.map((u) => u.version),
    ['1', '2'],
  );

  // A second failure in a row draws from a larger range: 1234 % 1500.
  h.server.dropStreams();
  await waitFor('the second drop', () => (stats.update_failure.value() === 2 ? true : undefined));
  // A response came in between, which resets the backoff to its first range.
  assert.deepEqual(clock.pendingDelays(), [234]);
});

test('ADS: clusters and endpoints on one stream, with the node on its first request only under set_node_on_first_message_only', { timeout: 30_000 }, async (t) => {
  const h = await harness(t, { adsConfig: grpcApi('V3', true) });
  h.server.setResources(CLUSTER_V3, 'c1', [{ '@type': CLUSTER_V3, name: 'backend', type: 'EDS', eds_cluster_config: { eds_config: { ads: {} } } }]);
  h.server.setResources(CLA_V3, 'e1', [assignment('backend', 1001)]);
  const ads: ConfigSourceConfig = { kind: 'ads', initialFetchTimeoutMs: 0, resourceApiVersion: 'V3' };
  const cds = h.subscribe(ads, CLUSTER_RESOURCE, [], 'cluster_manager.cds');
  const eds = h.subscribe(ads, ENDPOINT_RESOURCE, ['backend']);

  await requestWhere(h.server, 'the CDS ACK', (r) => r.type_url === CLUSTER_V3 && r.version_info === 'c1');
  await requestWhere(h.server, 'the EDS ACK', (r) => r.type_url === CLA_V3 && r.version_info === 'e1');
  assert.deepEqual(cds.recorder.updates, [{ names: ['backend'], version: 'c1' }]);
  assert.deepEqual(eds.recorder.updates, [{ names: ['backend'], version: 'e1' }]);
  assert.ok(h.server.requests.every((r) => r.stream === 1 && r.path === ADS_V3_PATH));
  assert.equal(h.server.requests[0]!.node?.['id'], 'test-node');
  assert.ok(h.server.requests.slice(1).every((r) => r.node === null));
  assert.equal(cds.stats.update_success.value(), 1);
  assert.equal(eds.stats.update_success.value(), 1);
});

test('initial_fetch_timeout: a subscription with no answer is told once, and keeps waiting', { timeout: 30_000 }, async (t) => {
  const clock = new ManualClock();
  const h = await harness(t, { clock });
  const { stats, recorder } = h.subscribe({ kind: 'api', api: grpcApi(), initialFetchTimeoutMs: 1000, resourceApiVersion: 'V3' }, ENDPOINT_RESOURCE, ['backend']);
  await requestWhere(h.server, 'the first request', () => true);
  clock.advance(999);
  assert.deepEqual(recorder.failures, []);
  clock.advance(1);
  assert.deepEqual(recorder.failures, [{ reason: 'fetch_timeout', message: '' }]);
  clock.advance(60_000);
  assert.equal(recorder.failures.length, 1);
  assert.equal(stats.init_fetch_timeout.value(), 1);

  h.server.setResources(CLA_V3, '1', [assignment('backend', 1001)]);
  await waitFor('the late update', () => (recorder.updates.length === 1 ? true : undefined));
});

test('REST: polled every refresh_delay plus jitter, a new version delivered, an unchanged one skipped, a failed fetch counted', { timeout: 30_000 }, async (t) => {
  const clock = new ManualClock();
  const h = await harness(t, { clock, random: () => 250 });
  h.server.setResources(CLA_V3, '1', [assignment('backend', 1001)]);
  const api: ApiConfigSource = { ...grpcApi(), apiType: 'REST', grpcServices: [], clusterNames: ['rest_cluster'], refreshDelayMs: 1000 };
  const { stats, recorder } = h.subscribe({ kind: 'api', api, initialFetchTimeoutMs: 0, resourceApiVersion: 'V3' }, ENDPOINT_RESOURCE, ['backend']);

  await waitFor('the first update', () => (recorder.updates.length === 1 ? true : undefined));
  const first = h.server.requests[0]!;
  assert.equal(first.path, '/v3/discovery:endpoints');
  assert.equal(first.version_info, '');
  assert.deepEqual(first.resource_names, ['backend']);
  assert.equal(first.node?.['id'], 'test-node');
  await waitFor('the next poll is timed', () => (clock.pendingDelays().length === 1 ? true : undefined));
  assert.deepEqual(clock.pendingDelays(), [1250]);

  clock.advance(1250);
  await waitFor('the second poll', () => (stats.update_success.value() === 2 ? true : undefined));
  assert.equal(h.server.requests[1]!.version_info, '1');
  assert.equal(recorder.updates.length, 1);

  h.server.setResources(CLA_V3, '2', [assignment('backend', 1002)]);
  await waitFor('the third poll is timed', () => (clock.pendingDelays().length === 1 ? true : undefined));
  clock.advance(1250);
  await waitFor('version 2', () => (recorder.updates.length === 2 ? true : undefined));
  assert.equal(recorder.updates[1]!.version, '2');
  assert.equal(stats.version.value(), versionHash('2'));

  h.server.restStatus = 500;
  await waitFor('the fourth poll is timed', () => (clock.pendingDelays().length === 1 ? true : undefined));
  clock.advance(1250);
  await waitFor('the failed poll', () => (stats.update_failure.value() === 1 ? true : undefined));
  assert.equal(stats.update_attempt.value(), 4);
  assert.deepEqual(recorder.failures, []);
});

test('V2 transport: the v2 service path and v2 type URLs; v2 resources read as v3', { timeout: 30_000 }, async (t) => {
  const h = await harness(t);
  h.server.setResources(CLA_V2, 'v2-1', [assignment('backend', 1001, CLA_V2)]);
  const { recorder } = h.subscribe({ kind: 'api', api: grpcApi('V2'), initialFetchTimeoutMs: 0, resourceApiVersion: 'V2' }, ENDPOINT_RESOURCE, ['backend']);
  const ack = await requestWhere(h.server, 'the ACK', (r) => r.version_info === 'v2-1');
  assert.equal(ack.path, '/envoy.api.v2.EndpointDiscoveryService/StreamEndpoints');
  assert.equal(ack.type_url, CLA_V2);
  assert.deepEqual(recorder.updates, [{ names: ['backend'], version: 'v2-1' }]);
});

test('an envoy_grpc cluster without hosts is a failed connection, retried with backoff', { timeout: 30_000 }, async (t) => {
  const clock = new ManualClock();
  const h = await harness(t, { clock, random: () => 1234, clusterAddresses: () => [] });
  const { stats } = h.subscribe({ kind: 'api', api: grpcApi(), initialFetchTimeoutMs: 0, resourceApiVersion: 'V3' }, ENDPOINT_RESOURCE, ['backend']);
  assert.equal(stats.update_failure.value(), 1);
  assert.equal(gauge(h.store, 'control_plane.connected_state'), 0);
  assert.deepEqual(clock.pendingDelays(), [234]);
  clock.advance(234);
  assert.equal(stats.update_failure.value(), 2);
  assert.deepEqual(clock.pendingDelays(), [1234]);
});
