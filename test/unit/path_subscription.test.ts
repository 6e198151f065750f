import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import type { JsonObject } from '../../src/config/json';
import { CLUSTER_RESOURCE, ENDPOINT_RESOURCE } from '../../src/config/xds/resource_types';
import type { UnknownDynamicFields } from '../../src/config/xds/resource_decoder';
import { SubscriptionStats, type ConfigUpdateFailureReason, type DecodedResource } from '../../src/config/xds/subscription';
import { versionHash } from '../../src/config/xds/version_hash';
import { createHeapStatsStore } from '../../src/stats/store';
import { silentLogger } from '../helpers/data_plane';
import { subscriptionFactory } from '../helpers/subscriptions';
import { waitFor } from '../helpers/proxy_process';

const CLA_V3 = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';

function assignment(cluster: string, port: number, extra: JsonObject = {}): JsonObject {
  return {
    '@type': CLA_V3,
    cluster_name: cluster,
    endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }],
    ...extra,
  };
}

interface Recorder {
  readonly updates: Array<{ resources: readonly DecodedResource[]; version: string }>;
  readonly failures: Array<{ reason: ConfigUpdateFailureReason; message: string }>;
  reject: string | null;
}

function subscribe(t: TestContext, file: string, policy: UnknownDynamicFields = 'warn', type = ENDPOINT_RESOURCE) {
  const store = createHeapStatsStore();
  const stats = new SubscriptionStats(store.scope('cluster.backend'));
  const recorder: Recorder = { updates: [], failures: [], reject: null };
  const subscription = subscriptionFactory(store, silentLogger, policy).subscribe(
    { kind: 'path', path: file, initialFetchTimeoutMs: 15000, resourceApiVersion: 'V3' },
    type,
    {
      onConfigUpdate(resources, version) {
        if (recorder.reject !== null) throw new Error(recorder.reject);
        recorder.updates.push({ resources, version });
      },
      onConfigUpdateFailed(reason, error) {
        recorder.failures.push({ reason, message: error?.message ?? '' });
      },
    },
    stats,
  );
  t.after(() => subscription.close());
  return { store, stats, recorder, subscription };
}

function tempDir(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-xds-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes next to `file` and renames over it: the atomic update a file-based config source watches for. */
function replace(file: string, contents: string): void {
  const temp = `${file}.tmp`;
  fs.writeFileSync(temp, contents);
  fs.renameSync(temp, file);
}

function response(version: string, resources: JsonObject[]): string {
  return JSON.stringify({ version_info: version, resources });
}

test('a file-based subscription reads at start and again on each atomic rename, with its stats', { timeout: 10_000 }, async (t) => {
  const file = path.join(tempDir(t), 'eds.json');
  fs.writeFileSync(file, response('1', [assignment('backend', 1001)]));
  const { stats, recorder, subscription } = subscribe(t, file);
  subscription.start(['backend']);
  await waitFor('the first update', () => recorder.updates.length === 1 || undefined, 5000);
  assert.equal(recorder.updates[0]!.version, '1');
  assert.equal(recorder.updates[0]!.resources[0]!.name, 'backend');
  assert.equal(recorder.updates[0]!.resources[0]!.resource['@type'], undefined);
  assert.equal(stats.update_attempt.value(), 1);
  assert.equal(stats.update_success.value(), 1);
  assert.equal(stats.version.value(), versionHash('1'));

  replace(file, response('2', [assignment('backend', 1002)]));
  await waitFor('the second update', () => recorder.updates.length === 2 || undefined, 5000);
  assert.equal(recorder.updates[1]!.version, '2');
  assert.equal(stats.update_success.value(), 2);
  assert.equal(stats.version.value(), versionHash('2'));
});

test('a malformed file is a counted failure; an update the subscriber refuses is a counted rejection', { timeout: 10_000 }, async (t) => {
  const file = path.join(tempDir(t), 'eds.yaml');
  fs.writeFileSync(file, 'version_info: "1"\nresources: [{"@type": "' + CLA_V3 + '", cluster_name: backend}]\n');
  const { stats, recorder, subscription } = subscribe(t, file);
  subscription.start([]);
  await waitFor('the first update', () => stats.update_success.value() === 1 || undefined, 5000);

  replace(file, 'version_info: "2"\nresources: [{"@type": "' + CLA_V3 + '", cluster_name: backend, endpoints: 7}]\n');
  await waitFor('the failure', () => recorder.failures.length === 1 || undefined, 5000);
  assert.equal(stats.update_failure.value(), 1);
  assert.equal(recorder.failures[0]!.reason, 'update_rejected');
  assert.match(recorder.failures[0]!.message, /eds\.yaml.*resources\[0\]\.endpoints/);

  recorder.reject = 'endpoints[0]: bad weight';
  replace(file, response('3', [assignment('backend', 1003)]));
  await waitFor('the rejection', () => recorder.failures.length === 2 || undefined, 5000);
  assert.equal(stats.update_rejected.value(), 1);
  assert.equal(recorder.failures[1]!.message, 'endpoints[0]: bad weight');
  assert.equal(stats.update_success.value(), 1);
  assert.equal(stats.version.value(), versionHash('1'));
});

test('a resource of another type is refused; a v2 type URL reads as its v3 successor', { timeout: 10_000 }, async (t) => {
  const dir = tempDir(t);
  const wrong = path.join(dir, 'cds.json');
  fs.writeFileSync(wrong, response('1', [assignment('backend', 1001)]));
  const first = subscribe(t, wrong, 'warn', CLUSTER_RESOURCE);
  first.subscription.start([]);
  await waitFor('the rejection', () => first.recorder.failures.length === 1 || undefined, 5000);
  // Read, then refused: a rejection, as Envoy counts a resource its decoder cannot unpack.
  assert.deepEqual([first.stats.update_rejected.value(), first.stats.update_failure.value()], [1, 0]);
  assert.match(first.recorder.failures[0]!.message, /resources\[0\]\.@type: .*ClusterLoadAssignment does not match the subscription's type envoy\.config\.cluster\.v3\.Cluster/);

  const v2 = path.join(dir, 'eds_v2.json');
  fs.writeFileSync(v2, response('1', [{ ...assignment('backend', 1001), '@type': 'type.googleapis.com/envoy.api.v2.ClusterLoadAssignment' }]));
  const second = subscribe(t, v2);
  second.subscription.start([]);
  // The first subscription's watch of the directory is shared: the write of this file may be read twice.
  await waitFor('the update', () => second.recorder.updates.length >= 1 || undefined, 5000);
  assert.equal(second.recorder.updates[0]!.resources[0]!.name, 'backend');
});

test('unknown fields: counted once each by default, rejected (update_rejected) with --reject-unknown-dynamic-fields, silent with --ignore-...', { timeout: 10_000 }, async (t) => {
  for (const [policy, success, rejected, counted] of [['warn', 2, 0, 1], ['ignore', 2, 0, 0], ['reject', 0, 2, 0]] as const) {
    const file = path.join(tempDir(t), 'eds.json');
    fs.writeFileSync(file, response('1', [assignment('backend', 1001, { surprise: 1 })]));
    const { store, stats, recorder, subscription } = subscribe(t, file, policy);
    subscription.start([]);
    replace(file, response('2', [assignment('backend', 1001, { surprise: 2 })]));
    // Counted as an attempt when read, as a success, failure or rejection once decoded and applied.
    const settled = () => stats.update_success.value() + stats.update_failure.value() + stats.update_rejected.value();
    await waitFor('the second read', () => settled() === 2 || undefined, 5000);
    assert.deepEqual([stats.update_success.value(), stats.update_rejected.value(), stats.update_failure.value()], [success, rejected, 0], policy);
    assert.equal(store.scope('server').counter('dynamic_unknown_fields').value(), counted, policy);
    if (policy === 'reject') assert.match(recorder.failures[0]!.message, /eds\.json: resources\[0\]\.surprise: unknown field$/);
  }
});
