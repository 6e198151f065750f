import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { type Clock, SystemClock } from '../../src/common/clock';
import type { JsonObject } from '../../src/config/json';
import type { Logger } from '../../src/log/logger_api';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore } from '../../src/stats/store';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { clusterTypes } from '../../src/extensions/supervisor_factories';
import { HealthFlag } from '../../src/upstream/shared/health_flags';
import type { MembershipUpdate } from '../../src/upstream/shared/membership';
import { SupervisorClusterManager } from '../../src/upstream/supervisor/supervisor_cluster_manager';
import { silentLogger, staticCluster } from '../helpers/data_plane';
import { ManualClock } from '../helpers/manual_clock';
import { waitFor } from '../helpers/proxy_process';
import { subscriptionFactory } from '../helpers/subscriptions';

const CLA = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';

function endpoint(port: number, extra: JsonObject = {}): JsonObject {
  return { endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } }, ...extra };
}

function assignment(name: string, localities: JsonObject[], extra: JsonObject = {}): JsonObject {
  return { '@type': CLA, cluster_name: name, endpoints: localities, ...extra };
}

function response(version: string, resources: JsonObject[]): string {
  return JSON.stringify({ version_info: version, resources });
}

/** Writes next to `file` and renames over it, as a file-based config source expects. */
function replace(file: string, contents: string): void {
  fs.writeFileSync(`${file}.tmp`, contents);
  fs.renameSync(`${file}.tmp`, file);
}

/** An EDS cluster `backend` (service `svc`) reading `file`, with no merge window: each accepted update reaches the workers at once. */
async function edsManager(t: TestContext, file: string, clock: Clock = new ManualClock()) {
  const store = createHeapStatsStore();
  const warnings: string[] = [];
  const log: Logger = { ...silentLogger, warn: (message) => warnings.push(message) };
  const updates: MembershipUpdate[] = [];
  const base = staticCluster('backend', [], { type: 'EDS' });
  const clusters = new SupervisorClusterManager(
    [
      {
        ...base,
        edsClusterConfig: { edsConfig: { kind: 'path', path: file, initialFetchTimeoutMs: 15_000, resourceApiVersion: 'V3' }, serviceName: 'svc' },
        commonLbConfig: { ...base.commonLbConfig, updateMergeWindowMs: 0 },
      },
    ],
    {
      types: clusterTypes(builtinExtensions()),
      hosts: store.hosts,
      stats: store,
      log: () => log,
      clock,
      runtime: new LiveRuntime([]),
      subscriptions: subscriptionFactory(store, log),
      onUpdate: (u) => updates.push(u),
    },
  );
  t.after(() => clusters.close());
  await clusters.initialize();
  const stat = (name: string) => store.snapshot().get(`cluster.backend.${name}`) ?? 0;
  const ports = () => clusters.snapshot('backend')!.hosts.map((h) => h.address.port);
  return { store, clusters, updates, warnings, stat, ports };
}

function tempFile(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-eds-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'eds.json');
}

test('EDS: priorities, localities, weights, metadata and health status of the assignment become the membership', { timeout: 10_000 }, async (t) => {
  const file = tempFile(t);
  fs.writeFileSync(
    file,
    response('1', [
      assignment('svc', [
        {
          locality: { region: 'eu', zone: 'a' },
          load_balancing_weight: 3,
          lb_endpoints: [
            endpoint(1001, { load_balancing_weight: 5, metadata: { filter_metadata: { 'envoy.lb': { canary: true } } } }),
            endpoint(1002, { health_status: 'UNHEALTHY' }),
            endpoint(1003, { health_status: 'DEGRADED' }),
          ],
        },
        { priority: 1, lb_endpoints: [endpoint(1004, { health_status: 'DRAINING' }), endpoint(1005, { health_status: 'TIMEOUT' })] },
      ]),
    ]),
  );
  const { clusters, stat } = await edsManager(t, file);
  const snapshot = clusters.snapshot('backend')!;
  assert.equal(snapshot.version, 1);
  assert.deepEqual(
    snapshot.hosts.map((h) => [h.address.port, h.priority, h.locality.region, h.locality.zone, h.localityWeight, h.weight, h.healthFlags]),
    [
      [1001, 0, 'eu', 'a', 3, 5, 0],
      [1002, 0, 'eu', 'a', 3, 1, HealthFlag.FAILED_EDS_HEALTH],
      [1003, 0, 'eu', 'a', 3, 1, HealthFlag.DEGRADED_EDS_HEALTH],
      [1004, 1, '', '', 0, 1, HealthFlag.FAILED_EDS_HEALTH],
      [1005, 1, '', '', 0, 1, HealthFlag.FAILED_EDS_HEALTH],
    ],
  );
  assert.deepEqual(snapshot.hosts[0]!.metadata, { 'proxy.lb': { canary: true } });
  assert.equal(stat('update_success'), 1);
  assert.equal(stat('membership_healthy'), 1);
  assert.equal(stat('membership_degraded'), 1);
});

test('EDS: an atomic rename replaces the set; a repeated set rebuilds nothing; an empty response keeps the hosts', { timeout: 20_000 }, async (t) => {
  const file = tempFile(t);
  fs.writeFileSync(file, response('1', [assignment('svc', [{ lb_endpoints: [endpoint(1001), endpoint(1002)] }])]));
  const { updates, stat, ports } = await edsManager(t, file);
  assert.deepEqual(ports(), [1001, 1002]);

  replace(file, response('2', [assignment('svc', [{ lb_endpoints: [endpoint(1002, { load_balancing_weight: 7 }), endpoint(1003)] }])]));
  await waitFor('the second assignment', () => (updates.length === 1 ? true : undefined), 10_000);
  const u = updates[0]!;
  assert.deepEqual([u.baseVersion, u.version, u.added, u.changed, u.removed], [1, 2, ['127.0.0.1:1003'], ['127.0.0.1:1002'], ['127.0.0.1:1001']]);

  replace(file, response('3', [assignment('svc', [{ lb_endpoints: [endpoint(1002, { load_balancing_weight: 7 }), endpoint(1003)] }])]));
  await waitFor('the repeated assignment', () => (stat('update_success') === 3 ? true : undefined), 10_000);
  assert.equal(stat('update_no_rebuild'), 1);
  assert.equal(updates.length, 1);

  // xDS removes endpoints by an assignment without them, never by leaving the assignment out.
  replace(file, response('4', []));
  await waitFor('the empty response', () => (stat('update_success') === 4 ? true : undefined), 10_000);
  assert.equal(stat('update_empty'), 1);
  assert.deepEqual(ports(), [1002, 1003]);

  replace(file, response('5', [assignment('svc', [])]));
  await waitFor('the assignment without endpoints', () => (updates.length === 2 ? true : undefined), 10_000);
  assert.deepEqual(ports(), []);
});

test('EDS: a bad assignment is rejected by field path from the resource and the hosts stay; a malformed file is a failure', { timeout: 30_000 }, async (t) => {
  const file = tempFile(t);
  fs.writeFileSync(file, response('1', [assignment('svc', [{ lb_endpoints: [endpoint(1001)] }])]));
  const { warnings, stat, ports } = await edsManager(t, file);
  const cases: Array<[string, JsonObject, RegExp]> = [
    ['a weight of 0 (the protos)', assignment('svc', [{ lb_endpoints: [endpoint(1002, { load_balancing_weight: 0 })] }]), /: endpoints\[0\]\.lb_endpoints\[0\]\.load_balancing_weight: value must be greater than or equal to 1/],
    ['a hostname address', assignment('svc', [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: 'backend.local', port_value: 80 } } } }] }]), /: endpoints\[0\]\.lb_endpoints\[0\]\.endpoint\.address/],
    ['an overprovisioning_factor of 0 (the protos)', assignment('svc', [{ lb_endpoints: [endpoint(1002)] }], { policy: { overprovisioning_factor: 0 } }), /: policy\.overprovisioning_factor: value must be greater than 0$/],
    [
      'two drop_overloads categories',
      assignment('svc', [{ lb_endpoints: [endpoint(1002)] }], { policy: { drop_overloads: [{ category: 'a' }, { category: 'b' }] } }),
      /: policy\.drop_overloads: Cluster drop_overloads config has 2 categories\. Only one is supported, as in Envoy\.$/,
    ],
    ['a policy field after 1.16', assignment('svc', [{ lb_endpoints: [endpoint(1002)] }], { policy: { weighted_priority_health: true } }), /: policy\.weighted_priority_health: weighted_priority_health is not implemented/],
    ['another cluster', assignment('other', [{ lb_endpoints: [endpoint(1002)] }]), /Unexpected EDS cluster \(expecting svc\): other$/],
  ];
  for (const [i, [what, resource, message]] of cases.entries()) {
    replace(file, response(`bad${i}`, [resource]));
    await waitFor(what, () => (stat('update_rejected') === i + 1 ? true : undefined), 10_000);
    assert.match(warnings.at(-1)!, message, what);
    assert.deepEqual(ports(), [1001], `${what}: the hosts stay`);
  }
  replace(file, '{"version_info": "x", "resources": [');
  await waitFor('the malformed file', () => (stat('update_failure') === 1 ? true : undefined), 10_000);
  assert.deepEqual(ports(), [1001]);
  assert.equal(stat('update_success'), 1);
});

test('EDS: a source that fails at first ends initialization with no hosts; the first good file then populates the cluster', { timeout: 20_000 }, async (t) => {
  const file = tempFile(t);
  const { clusters, stat, ports } = await edsManager(t, file);
  assert.equal(stat('update_failure'), 1);
  assert.equal(clusters.snapshot('backend')!.version, 0);
  replace(file, response('1', [assignment('svc', [{ lb_endpoints: [endpoint(1001)] }])]));
  await waitFor('the first assignment', () => (ports().length === 1 ? true : undefined), 10_000);
  assert.equal(clusters.snapshot('backend')!.version, 1);
});

test('EDS: an endpoint_stale_after beyond one Node timer (30 days) keeps the hosts on the system clock', { timeout: 10_000 }, async (t) => {
  const file = tempFile(t);
  const policy = { policy: { endpoint_stale_after: '2592000s' } };
  fs.writeFileSync(file, response('1', [assignment('svc', [{ lb_endpoints: [endpoint(1001)] }], policy)]));
  const { stat, ports } = await edsManager(t, file, new SystemClock());
  assert.equal(stat('assignment_timeout_received'), 1);
  // Node fires a setTimeout over 2^31 - 1 ms after 1 ms: the hosts would be gone by now.
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(ports(), [1001]);
  assert.equal(stat('assignment_stale'), 0);
});

test('EDS: a change of endpoint_stale_after alone reaches no worker; the policy workers get leaves it out', { timeout: 20_000 }, async (t) => {
  const file = tempFile(t);
  const withPolicy = (version: string, policy: JsonObject) => response(version, [assignment('svc', [{ lb_endpoints: [endpoint(1001)] }], { policy })]);
  fs.writeFileSync(file, withPolicy('1', { endpoint_stale_after: '60s' }));
  const { updates, stat } = await edsManager(t, file);
  const sent = updates.length;

  replace(file, withPolicy('2', { endpoint_stale_after: '120s' }));
  await waitFor('the second assignment', () => (stat('update_success') === 2 ? true : undefined), 10_000);
  assert.equal(updates.length, sent, 'no membership update for a field no worker reads');

  replace(file, withPolicy('3', { endpoint_stale_after: '120s', overprovisioning_factor: 200 }));
  await waitFor('the third assignment', () => (updates.length === sent + 1 ? true : undefined), 10_000);
  assert.deepEqual(updates.at(-1)!.policy, { overprovisioningFactor: 200, dropOverload: null });
});
