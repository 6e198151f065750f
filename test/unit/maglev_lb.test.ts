import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Host } from '../../src/upstream/worker/host';
import type { LoadBalancerContext } from '../../src/upstream/worker/lb/load_balancer';
import { buildMaglevTable } from '../../src/upstream/worker/lb/maglev_lb';
import { normalizeWeights } from '../../src/upstream/worker/lb/thread_aware_load_balancer';
import { HostSet } from '../../src/upstream/worker/priority_set';
import { referenceXxHash64 } from '../helpers/hash_reference';
import { balancer, host, seeded } from '../helpers/load_balancer';
import { DEFAULT_OVERPROVISIONING_FACTOR } from '../../src/config/model';

/** Envoy's Maglev table population, written plainly with BigInt: host index per slot. */
function referenceTable(hosts: readonly Host[], size: number): number[] {
  const sum = hosts.reduce((s, h) => s + h.weight, 0);
  const weights = hosts.map((h) => h.weight / sum);
  const max = Math.max(...weights);
  const m = BigInt(size);
  const entries = hosts.map((h, i) => ({
    offset: referenceXxHash64(h.addressString, 0n) % m,
    skip: (referenceXxHash64(h.addressString, 1n) % (m - 1n)) + 1n,
    next: 0n,
    target: 0,
    weight: weights[i],
  }));
  const table: number[] = new Array(size).fill(-1);
  let filled = 0;
  for (let iteration = 1; filled < size; iteration++) {
    for (let i = 0; i < entries.length && filled < size; i++) {
      const e = entries[i];
      if (iteration * e.weight < e.target) continue;
      e.target += max;
      let c = Number((e.offset + e.skip * e.next) % m);
      while (table[c] !== -1) {
        e.next++;
        c = Number((e.offset + e.skip * e.next) % m);
      }
      table[c] = i;
      e.next++;
      filled++;
    }
  }
  return table;
}

function context(hashKey: bigint | null, refuse: (h: Host) => boolean = () => false, retries = 0): LoadBalancerContext {
  return { hashKey, metadataMatch: null, downstream: null, hostSelectionRetryCount: retries, shouldSelectAnotherHost: refuse };
}

test('the table is Envoy\'s population from xxHash64 offsets and skips, with weights', () => {
  const hosts = [host(80, { weight: 1 }), host(81, { weight: 2 }), host(82, { weight: 3, address: '::1' })];
  const table = buildMaglevTable(normalizeWeights(new HostSet(0, hosts, DEFAULT_OVERPROVISIONING_FACTOR), false, false), 17, false);
  assert.deepEqual(Array.from(table.entries), referenceTable(hosts, 17));
  const big = buildMaglevTable(normalizeWeights(new HostSet(0, hosts, DEFAULT_OVERPROVISIONING_FACTOR), false, false), 65537, false);
  assert.deepEqual(Array.from(big.entries), referenceTable(hosts, 65537));
});

test('lookups use hash % table size; gauges count entries per host', () => {
  const hosts = [80, 81, 82, 83, 84].map((p) => host(p));
  const { lb, info } = balancer(hosts, { config: { lbPolicy: 'MAGLEV', maglevLbConfig: { tableSize: 101 } } });
  const table = referenceTable(hosts, 101);
  const random = seeded(11);
  for (let i = 0; i < 100; i++) {
    const h = (BigInt(random()) << 32n) | BigInt(random());
    assert.equal(lb.chooseHost(context(h))?.port, hosts[table[Number(h % 101n)]].port, `hash ${h}`);
  }
  const counts = [0, 1, 2, 3, 4].map((i) => table.filter((x) => x === i).length);
  const scope = info.tableScope('maglev_lb')!;
  assert.deepEqual([scope.gauge('min_entries_per_host').value(), scope.gauge('max_entries_per_host').value()], [Math.min(...counts), Math.max(...counts)]);
});

test('a retry perturbs the hash with ~0 - attempt + 1', () => {
  const hosts = [80, 81, 82, 83, 84].map((p) => host(p));
  const { lb } = balancer(hosts, { config: { lbPolicy: 'MAGLEV', maglevLbConfig: { tableSize: 101 } } });
  const table = referenceTable(hosts, 101);
  const M64 = (1n << 64n) - 1n;
  for (const h of [0n, 12345n, M64, 0x8000000000000000n]) {
    const perturbed = (attempt: bigint) => hosts[table[Number((h ^ ((M64 - attempt + 1n) & M64)) % 101n)]].port;
    assert.equal(lb.chooseHost(context(h, () => true, 1))?.port, perturbed(1n));
    assert.equal(lb.chooseHost(context(h, () => true, 2))?.port, perturbed(2n));
  }
  // A refused host leads to another when the perturbed slot holds one.
  const h = 777n;
  const first = lb.chooseHost(context(h))!;
  const second = lb.chooseHost(context(h, (x) => x === first, 4))!;
  assert.notEqual(second, first);
});

test('weighted hosts get slots and picks in proportion (chi-square, fixed seed)', () => {
  const hosts = [host(80, { weight: 1 }), host(81, { weight: 2 }), host(82, { weight: 3 }), host(83, { weight: 4 })];
  const { lb } = balancer(hosts, { config: { lbPolicy: 'MAGLEV', maglevLbConfig: { tableSize: 65537 } } });
  const table = referenceTable(hosts, 65537);
  const shares = [0, 1, 2, 3].map((i) => table.filter((x) => x === i).length / 65537);
  shares.forEach((s, i) => assert.ok(Math.abs(s - (i + 1) / 10) < 0.01, `share ${s}`));
  const random = seeded(42);
  const counts = [0, 0, 0, 0];
  const n = 40000;
  for (let i = 0; i < n; i++) counts[lb.chooseHost(context((BigInt(random()) << 32n) | BigInt(random())))!.port - 80]++;
  const chi = counts.reduce((s, c, i) => s + (c - n * shares[i]) ** 2 / (n * shares[i]), 0);
  assert.ok(chi < 16.27, `chi-square ${chi} for ${counts}`);
});

test('panic puts all hosts in the table; priorities follow the hash', () => {
  const hosts = [host(80), host(81, { health: 'UNHEALTHY' }), host(82, { health: 'UNHEALTHY' })];
  const { lb } = balancer(hosts, { config: { lbPolicy: 'MAGLEV', maglevLbConfig: { tableSize: 17 } }, random: seeded(5) });
  assert.deepEqual([...new Set(Array.from({ length: 60 }, () => lb.chooseHost(null)?.port))].sort(), [80, 81, 82]);
  const p1 = [host(90, { priority: 1 }), host(91, { priority: 1 })];
  const two = balancer([host(80, { health: 'UNHEALTHY' }), ...p1], { config: { lbPolicy: 'MAGLEV', maglevLbConfig: { tableSize: 17 } }, random: seeded(6) });
  assert.ok(Array.from({ length: 40 }, () => two.lb.chooseHost(null)!.port).every((p) => p >= 90));
});
