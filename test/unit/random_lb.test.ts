import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Host } from '../../src/upstream/worker/host';
import { balancer, host, ports, seeded, sequence } from '../helpers/load_balancer';
import type { RandomSource } from '../../src/common/random';

function random(hosts: Host[], source: RandomSource) {
  return balancer(hosts, { random: source, config: { lbPolicy: 'RANDOM' } });
}

/** Pearson's chi-square statistic of `observed` against equal expected counts. */
function chiSquareUniform(observed: readonly number[]): number {
  const total = observed.reduce((a, b) => a + b, 0);
  const expected = total / observed.length;
  return observed.reduce((sum, o) => sum + (o - expected) ** 2 / expected, 0);
}

function countsOf(hosts: readonly Host[], picks: readonly (number | null)[]): number[] {
  return hosts.map((h) => picks.filter((p) => p === h.port).length);
}

// The 0.999 quantile of chi-square with 4 degrees of freedom: a fair balancer exceeds it one
// time in a thousand; the seed is fixed, so the test gives the same answer every run.
const CHI_SQUARE_4_DOF_P999 = 18.467;

test('each pick is hosts[random % n]; the priority takes a draw only when the load is split', () => {
  const hosts = [host(80), host(81), host(82)];
  assert.deepEqual(ports(random(hosts, sequence(4, 2, 3)).lb, 3), [81, 82, 80]);
  // P0 half healthy (70% of the load), P1 the rest: a draw for the priority, then one for the host.
  const split = [host(80), host(81, { health: 'UNHEALTHY' }), host(90, { priority: 1 })];
  assert.deepEqual(ports(random(split, sequence(0, 4, 99, 7)).lb, 2), [80, 90]);
});

test('picks are uniform over the hosts (chi-square, fixed seed)', () => {
  const hosts = [host(80), host(81), host(82), host(83), host(84)];
  const counts = countsOf(hosts, ports(random(hosts, seeded(42)).lb, 50_000));
  assert.ok(chiSquareUniform(counts) < CHI_SQUARE_4_DOF_P999, `counts ${counts.join(', ')}`);
  for (const c of counts) assert.ok(c > 9_000 && c < 11_000, `counts ${counts.join(', ')}`);
});

test('endpoint weights play no part, as in Envoy 1.16', () => {
  const hosts = [host(80, { weight: 1 }), host(81, { weight: 9 }), host(82, { weight: 1 }), host(83, { weight: 50 }), host(84, { weight: 2 })];
  const counts = countsOf(hosts, ports(random(hosts, seeded(9)).lb, 50_000));
  assert.ok(chiSquareUniform(counts) < CHI_SQUARE_4_DOF_P999, `counts ${counts.join(', ')}`);
});

test('unhealthy hosts get no picks while enough are healthy; in panic, all do', () => {
  const hosts = [host(80), host(81, { health: 'UNHEALTHY' }), host(82), host(83)];
  const healthy = ports(random(hosts, seeded(5)).lb, 1000);
  assert.equal(healthy.filter((p) => p === 81).length, 0);
  assert.deepEqual(new Set(healthy), new Set([80, 82, 83]));
  const panic = [host(80), host(81, { health: 'UNHEALTHY' }), host(82, { health: 'UNHEALTHY' })];
  const b = random(panic, seeded(5));
  assert.deepEqual(new Set(ports(b.lb, 300)), new Set([80, 81, 82]));
  assert.equal(b.info.stats.counters.lb_healthy_panic.value(), 300);
});

test('no hosts: no pick', () => {
  assert.equal(random([], sequence(0)).lb.chooseHost(null), null);
});
