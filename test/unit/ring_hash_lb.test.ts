import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_OVERPROVISIONING_FACTOR, type RingHashLbConfig } from '../../src/config/model';
import type { Host } from '../../src/upstream/worker/host';
import type { LoadBalancerContext } from '../../src/upstream/worker/lb/load_balancer';
import { buildRing } from '../../src/upstream/worker/lb/ring_hash_lb';
import { normalizeWeights } from '../../src/upstream/worker/lb/thread_aware_load_balancer';
import { HostSet } from '../../src/upstream/worker/priority_set';
import { referenceXxHash64 } from '../helpers/hash_reference';
import { balancer, host, seeded } from '../helpers/load_balancer';

const M64 = (1n << 64n) - 1n;

/** Envoy's ring, written plainly with BigInt from the published algorithm: [hash, host index] sorted. */
function referenceRing(hosts: readonly Host[], minRing: number, maxRing: number): [bigint, number][] {
  const sum = hosts.reduce((s, h) => s + h.weight, 0);
  const weights = hosts.map((h) => h.weight / sum);
  const min = Math.min(...weights);
  const scale = Math.min(Math.ceil(min * minRing) / min, maxRing);
  const ring: [bigint, number][] = [];
  let current = 0;
  let target = 0;
  hosts.forEach((h, index) => {
    target += scale * weights[index];
    for (let i = 0; current < target; i++, current++) ring.push([referenceXxHash64(`${h.addressString}_${i}`), index]);
  });
  return ring.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

function referenceLookup(ring: [bigint, number][], h: bigint): number {
  const i = ring.findIndex(([hash]) => hash >= h);
  return i === -1 ? 0 : i;
}

function context(hashKey: bigint | null, refuse: (h: Host) => boolean = () => false, retries = 0): LoadBalancerContext {
  return { hashKey, metadataMatch: null, downstream: null, hostSelectionRetryCount: retries, shouldSelectAnotherHost: refuse };
}

const config = (minimumRingSize: number, maximumRingSize = 8388608): RingHashLbConfig => ({ minimumRingSize, maximumRingSize, hashFunction: 'XX_HASH' });

test('ring points are the xxHash64 of "<address>_<i>", as many as the weights ask, sorted', () => {
  const hosts = [host(80, { weight: 1 }), host(81, { weight: 2 }), host(82, { weight: 1, address: '::1' })];
  const ring = buildRing(normalizeWeights(new HostSet(0, hosts, DEFAULT_OVERPROVISIONING_FACTOR), false, false), config(12), false);
  const expected = referenceRing(hosts, 12, 8388608);
  assert.equal(expected.length, 12);
  const actual = Array.from(ring.hashHi, (hi, i) => [(BigInt(hi) << 32n) | BigInt(ring.hashLo[i]), ring.hostIndex[i]]);
  assert.deepEqual(actual, expected);
  assert.deepEqual(ring.stats, { size: 12, minHashesPerHost: 3, maxHashesPerHost: 6 });
});

test('lookups take the first point at or after the hash and wrap past the last', () => {
  const hosts = [80, 81, 82, 83].map((p) => host(p));
  const { lb, info } = balancer(hosts, { config: { lbPolicy: 'RING_HASH', ringHashLbConfig: config(16) } });
  const ring = referenceRing(hosts, 16, 8388608);
  const probes = [0n, 1n, ring[0][0], ring[0][0] + 1n, ring[7][0], ring[15][0], ring[15][0] + 1n, M64];
  const random = seeded(7);
  for (let i = 0; i < 50; i++) probes.push((BigInt(random()) << 32n) | BigInt(random()));
  for (const h of probes) assert.equal(lb.chooseHost(context(h))?.port, hosts[ring[referenceLookup(ring, h)][1]].port, `hash ${h}`);
  const scope = info.tableScope('ring_hash_lb')!;
  assert.deepEqual([scope.gauge('size').value(), scope.gauge('min_hashes_per_host').value(), scope.gauge('max_hashes_per_host').value()], [16, 4, 4]);
});

test('MURMUR_HASH_2 places points at the std::hash of the same keys', () => {
  const hosts = [host(80)];
  const ring = buildRing(normalizeWeights(new HostSet(0, hosts, DEFAULT_OVERPROVISIONING_FACTOR), false, false), { ...config(1), hashFunction: 'MURMUR_HASH_2' }, false);
  // std::hash<std::string>{}("10.0.0.1:80_0"), from a g++ build (murmur_hash2.test.ts).
  assert.equal((BigInt(ring.hashHi[0]) << 32n) | BigInt(ring.hashLo[0]), 13659246566588789388n);
});

test('use_hostname_for_hashing keys the points by hostname', () => {
  const h = host(80);
  h.hostname = 'svc.internal';
  const ring = buildRing(normalizeWeights(new HostSet(0, [h], DEFAULT_OVERPROVISIONING_FACTOR), false, false), config(1), true);
  assert.equal((BigInt(ring.hashHi[0]) << 32n) | BigInt(ring.hashLo[0]), referenceXxHash64('svc.internal_0'));
});

test('a retry moves along the ring by the attempt number', () => {
  const hosts = [80, 81, 82, 83].map((p) => host(p));
  const { lb } = balancer(hosts, { config: { lbPolicy: 'RING_HASH', ringHashLbConfig: config(16) } });
  const ring = referenceRing(hosts, 16, 8388608);
  const h = ring[3][0];
  const first = hosts[ring[3][1]];
  // Refuse everything: three picks, the last one (index 3 + 2) stands.
  assert.equal(lb.chooseHost(context(h, () => true, 2))?.port, hosts[ring[5][1]].port);
  const picked = lb.chooseHost(context(h, (x) => x === first, 3));
  assert.notEqual(picked, first);
  const next = ring.slice(4).find(([, i]) => hosts[i] !== first)!;
  assert.equal(picked?.port, hosts[next[1]].port);
});

test('weighted hosts get shares of the ring near their weights, and picks follow the arcs (chi-square, fixed seed)', () => {
  const hosts = [host(80, { weight: 1 }), host(81, { weight: 2 }), host(82, { weight: 3 }), host(83, { weight: 4 })];
  const { lb } = balancer(hosts, { config: { lbPolicy: 'RING_HASH', ringHashLbConfig: config(4096) } });
  const ring = referenceRing(hosts, 4096, 8388608);
  // Each host's arc: the stretch of hashes that ends at each of its points.
  const arcs = [0, 0, 0, 0];
  const two64 = Number(1n << 64n);
  ring.forEach(([hash, index], i) => {
    const previous = i === 0 ? ring[ring.length - 1][0] - (1n << 64n) : ring[i - 1][0];
    arcs[index] += Number(hash - previous) / two64;
  });
  arcs.forEach((share, i) => assert.ok(Math.abs(share - (i + 1) / 10) < 0.1 * ((i + 1) / 10), `share ${share} for weight ${i + 1}`));
  const random = seeded(42);
  const counts = [0, 0, 0, 0];
  const n = 40000;
  for (let i = 0; i < n; i++) counts[lb.chooseHost(context((BigInt(random()) << 32n) | BigInt(random())))!.port - 80]++;
  const chi = counts.reduce((s, c, i) => s + (c - n * arcs[i]) ** 2 / (n * arcs[i]), 0);
  // 3 degrees of freedom: 16.27 is the 0.999 quantile.
  assert.ok(chi < 16.27, `chi-square ${chi} for ${counts}`);
});

test('without a hash key, picks use a random 64-bit value', () => {
  const hosts = [80, 81, 82].map((p) => host(p));
  const { lb } = balancer(hosts, { config: { lbPolicy: 'RING_HASH', ringHashLbConfig: config(12) }, random: seeded(3) });
  const seen = new Set(Array.from({ length: 60 }, () => lb.chooseHost(null)?.port));
  assert.deepEqual([...seen].sort(), [80, 81, 82]);
});

test('panic builds the ring from all hosts; otherwise only healthy ones are on it', () => {
  const hosts = [host(80), host(81, { health: 'UNHEALTHY' }), host(82, { health: 'UNHEALTHY' })];
  const { lb, info } = balancer(hosts, { config: { lbPolicy: 'RING_HASH', ringHashLbConfig: config(12) }, random: seeded(5) });
  const seen = new Set(Array.from({ length: 60 }, () => lb.chooseHost(null)?.port));
  assert.deepEqual([...seen].sort(), [80, 81, 82]);
  assert.equal(info.stats.counters.lb_healthy_panic.value(), 60);
  const healthy = balancer([host(80), host(81), host(82, { health: 'UNHEALTHY' })], { config: { lbPolicy: 'RING_HASH', ringHashLbConfig: config(12) }, random: seeded(5) });
  const used = new Set(Array.from({ length: 60 }, () => healthy.lb.chooseHost(null)?.port));
  assert.deepEqual([...used].sort(), [80, 81]);
});

test('the priority comes from the hash: a healthy P0 takes all, an unhealthy one hands over to P1', () => {
  const p0 = [host(80), host(81)];
  const p1 = [host(90, { priority: 1 }), host(91, { priority: 1 })];
  const { lb, update } = balancer([...p0, ...p1], { config: { lbPolicy: 'RING_HASH', ringHashLbConfig: config(12) }, random: seeded(9) });
  assert.ok(Array.from({ length: 40 }, () => lb.chooseHost(null)!.port).every((p) => p < 90));
  update([host(80, { health: 'UNHEALTHY' }), host(81, { health: 'UNHEALTHY' }), ...p1]);
  assert.ok(Array.from({ length: 40 }, () => lb.chooseHost(null)!.port).every((p) => p >= 90));
});

test('locality-weighted: each locality shares its weight among its hosts; weight 0 leaves it out', () => {
  const a = { region: 'r', zone: 'a', subZone: '' };
  const b = { region: 'r', zone: 'b', subZone: '' };
  const c = { region: 'r', zone: 'c', subZone: '' };
  const hosts = [host(80, { locality: a }), host(81, { locality: a }), host(82, { locality: b }), host(83, { locality: c })];
  const weights = new Map([[a.zone, 3], [b.zone, 1], [c.zone, 0]]);
  hosts.forEach((h) => (h.localityWeight = weights.get(h.locality.zone)!));
  const normalized = normalizeWeights(new HostSet(0, hosts, DEFAULT_OVERPROVISIONING_FACTOR), false, true);
  assert.deepEqual(normalized.hosts.map((h) => h.port), [80, 81, 82]);
  assert.deepEqual(normalized.weights, [0.375, 0.375, 0.25]);
  assert.deepEqual([normalized.min, normalized.max], [0.25, 0.375]);
});

test('an empty host set picks no host', () => {
  const { lb } = balancer([], { config: { lbPolicy: 'RING_HASH' } });
  assert.equal(lb.chooseHost(context(5n)), null);
});
