// Endpoint weights up to the proto's uint32 maximum (Envoy 1.16 takes any weight >= 1): loaded
// from a static load_assignment and from EDS, then the share each balancer gives each host.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadBootstrap } from '../../src/config/load';
import { DEFAULT_OVERPROVISIONING_FACTOR, type Locality } from '../../src/config/model';
import { edsAssignment } from '../../src/upstream/supervisor/eds_cluster';
import type { Host } from '../../src/upstream/worker/host';
import { buildMaglevTable } from '../../src/upstream/worker/lb/maglev_lb';
import { buildRing } from '../../src/upstream/worker/lb/ring_hash_lb';
import { normalizeWeights } from '../../src/upstream/worker/lb/thread_aware_load_balancer';
import { HostSet } from '../../src/upstream/worker/priority_set';
import { staticCluster } from '../helpers/data_plane';
import { balancer, host, ports, seeded } from '../helpers/load_balancer';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const MAX = 2 ** 32 - 1;
/** About 4 : 2 : 1. */
const WEIGHTS = [MAX, 2 ** 31, 2 ** 30];
const SHARES = [4 / 7, 2 / 7, 1 / 7];

const endpoint = (port: number, weight: number) => ({
  endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } },
  load_balancing_weight: weight,
});

/** The fraction of `picks` each of the hosts on ports 80, 81, ... got. */
function shares(picks: readonly (number | null)[], hosts: number): number[] {
  const counts = new Array<number>(hosts).fill(0);
  for (const port of picks) counts[port! - 80]++;
  return counts.map((c) => c / picks.length);
}

function assertShares(actual: readonly number[], expected: readonly number[], tolerance: number, what: string): void {
  actual.forEach((share, i) => assert.ok(Math.abs(share - expected[i]) <= tolerance, `${what}: host ${i} got ${share}, expected ${expected[i]} (all: ${actual})`));
}

const weightedHosts = (): Host[] => WEIGHTS.map((weight, i) => host(80 + i, { weight }));

test('weights above 128, up to 2^32-1, load from a static load_assignment and from EDS', () => {
  const assignment = { cluster_name: 'c', endpoints: [{ lb_endpoints: [endpoint(80, 129), endpoint(81, MAX)] }] };
  for (const version of [2, 3]) {
    const config = { static_resources: { clusters: [{ name: 'c', connect_timeout: '1s', load_assignment: assignment }] } };
    const loaded = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(config), bootstrapVersion: version, allowUnknownStaticFields: false });
    const weights = loaded.bootstrap.clusters[0]!.loadAssignment!.endpoints[0]!.lbEndpoints.map((e) => e.loadBalancingWeight);
    assert.deepEqual(weights, [129, MAX], `v${version}`);
  }
  assert.deepEqual(
    edsAssignment(assignment).hosts.map((h) => h.weight),
    [129, MAX],
  );
  // Past uint32, the proto's type refuses it.
  const tooBig = { cluster_name: 'c', endpoints: [{ lb_endpoints: [endpoint(80, MAX + 1)] }] };
  const config = { static_resources: { clusters: [{ name: 'c', connect_timeout: '1s', load_assignment: tooBig }] } };
  assert.throws(
    () => loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(config), allowUnknownStaticFields: false }),
    /clusters\[0\]\.load_assignment\.endpoints\[0\]\.lb_endpoints\[0\]\.load_balancing_weight: out of range for uint32: 4294967296$/,
  );
});

test('ROUND_ROBIN with weights up to 2^32-1: EDF shares in proportion, a weight-1 host next to 2^32-1 all but starved', () => {
  const { lb } = balancer(weightedHosts());
  assertShares(shares(ports(lb, 7000), 3), SHARES, 0.001, 'EDF');
  const lopsided = balancer([host(80, { weight: MAX }), host(81, { weight: 1 })]);
  assert.ok(shares(ports(lopsided.lb, 10_000), 2)[1]! <= 1 / 10_000);
  // Two hosts a single unit apart out of 2^32 still share equally.
  const close = balancer([host(80, { weight: MAX }), host(81, { weight: MAX - 1 })]);
  assertShares(shares(ports(close.lb, 1000), 2), [0.5, 0.5], 0.001, 'MAX vs MAX - 1');
});

test('LEAST_REQUEST with weights up to 2^32-1: the weight divided by active requests + 1', () => {
  const hosts = weightedHosts();
  const idle = balancer(hosts, { config: { lbPolicy: 'LEAST_REQUEST' } });
  assertShares(shares(ports(idle.lb, 7000), 3), SHARES, 0.001, 'idle');
  // With 1 request in flight the heaviest host weighs (2^32-1)/2, about the second's 2^31.
  const busy = balancer(hosts, { config: { lbPolicy: 'LEAST_REQUEST' }, activeRequests: new Map([[hosts[0]!, 1]]) });
  assertShares(shares(ports(busy.lb, 5000), 3), [0.4, 0.4, 0.2], 0.001, 'busy');
});

test('RING_HASH with weights up to 2^32-1: points and picks in proportion', () => {
  const hosts = weightedHosts();
  const ring = buildRing(normalizeWeights(new HostSet(0, hosts, DEFAULT_OVERPROVISIONING_FACTOR), false, false), { minimumRingSize: 7 * 1024, maximumRingSize: 8388608, hashFunction: 'XX_HASH' }, false);
  const points = [0, 0, 0];
  for (const index of ring.hostIndex) points[index]++;
  // 4 : 2 : 1 to the point (the smallest share is a hair above 1/7: 1025 points, not 1024).
  assert.deepEqual([points[0]! / points[2]!, points[1]! / points[2]!], [4, 2]);
  const { lb } = balancer(hosts, { config: { lbPolicy: 'RING_HASH', ringHashLbConfig: { minimumRingSize: 7 * 1024, maximumRingSize: 8388608, hashFunction: 'XX_HASH' } }, random: seeded(3) });
  assertShares(shares(ports(lb, 20_000), 3), SHARES, 0.03, 'ring');
});

test('MAGLEV with weights up to 2^32-1: table entries and picks in proportion', () => {
  const hosts = weightedHosts();
  const table = buildMaglevTable(normalizeWeights(new HostSet(0, hosts, DEFAULT_OVERPROVISIONING_FACTOR), false, false), 65537, false);
  const entries = [0, 0, 0];
  for (const index of table.entries) entries[index]++;
  entries.forEach((n, i) => assert.ok(Math.abs(n - 65537 * SHARES[i]!) <= 2, `host ${i}: ${n} entries (${entries})`));
  const { lb } = balancer(hosts, { config: { lbPolicy: 'MAGLEV', maglevLbConfig: { tableSize: 65537 } }, random: seeded(4) });
  assertShares(shares(ports(lb, 20_000), 3), SHARES, 0.02, 'maglev');
});

test('RANDOM with weights up to 2^32-1: uniform, as Envoy 1.16 ignores endpoint weights there', () => {
  const { lb } = balancer(weightedHosts(), { config: { lbPolicy: 'RANDOM' }, random: seeded(5) });
  assertShares(shares(ports(lb, 30_000), 3), [1 / 3, 1 / 3, 1 / 3], 0.02, 'random');
});

test('locality weights up to 2^32-1, with endpoint weights up to 2^32-1 inside each locality', () => {
  const zones: Locality[] = ['a', 'b'].map((zone) => ({ region: 'r', zone, subZone: '' }));
  const hosts = [
    host(80, { locality: zones[0], localityWeight: MAX, weight: MAX }),
    host(81, { locality: zones[0], localityWeight: MAX, weight: 2 ** 31 }),
    host(82, { locality: zones[1], localityWeight: 2 ** 31, weight: 1 }),
  ];
  const common = staticCluster('c', []).commonLbConfig;
  const { lb } = balancer(hosts, { config: { commonLbConfig: { ...common, localityWeighted: true } } });
  // Zone a gets 2/3, split 2 : 1 by the endpoint weights; zone b 1/3.
  assertShares(shares(ports(lb, 9000), 3), [4 / 9, 2 / 9, 1 / 3], 0.001, 'localities');
});
