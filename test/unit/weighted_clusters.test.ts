import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { WeightedClusters } from '../../src/config/model';
import { pickWeightedCluster } from '../../src/filters/http/weighted_clusters';
import { Runtime } from '../../src/runtime/runtime';
import { seededRandom } from '../helpers/seeded_random';

const WEIGHTED: WeightedClusters = {
  totalWeight: 100,
  clusters: [
    { name: 'a', weight: 70, runtimeKey: 'routing.a' },
    { name: 'b', weight: 20, runtimeKey: 'routing.b' },
    { name: 'c', weight: 10, runtimeKey: 'routing.c' },
  ],
};

const none = new Runtime([]);

test('random % total_weight against the cumulative weights, in order', () => {
  const pick = (random: number) => pickWeightedCluster(WEIGHTED, none, random).name;
  assert.equal(pick(0), 'a');
  assert.equal(pick(69), 'a');
  assert.equal(pick(70), 'b');
  assert.equal(pick(89), 'b');
  assert.equal(pick(90), 'c');
  assert.equal(pick(99), 'c');
  assert.equal(pick(100), 'a');
  assert.equal(pick(0xffffffff), 'c'); // 4294967295 % 100 = 95
});

test('the distribution follows the weights (fixed seed)', () => {
  const uniform = seededRandom(12);
  const counts = new Map<string, number>();
  const n = 20_000;
  for (let i = 0; i < n; i++) {
    const name = pickWeightedCluster(WEIGHTED, none, Math.floor(uniform() * 2 ** 32)).name;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  for (const { name, weight } of WEIGHTED.clusters) {
    const share = (counts.get(name) ?? 0) / n;
    assert.ok(Math.abs(share - weight / 100) < 0.015, `${name}: ${share}`);
  }
});

test('the runtime overrides a weight at <prefix>.<name>', () => {
  const runtime = new Runtime([
    ['routing.a', '0'],
    ['routing.b', '90'],
  ]);
  const pick = (random: number) => pickWeightedCluster(WEIGHTED, runtime, random).name;
  assert.equal(pick(0), 'b');
  assert.equal(pick(89), 'b');
  assert.equal(pick(90), 'c');
});

test('runtime weights past the total: the entry that crosses it takes the rest; short of it: the last entry', () => {
  const over = new Runtime([['routing.a', '95']]);
  assert.equal(pickWeightedCluster(WEIGHTED, over, 96).name, 'b');
  assert.equal(pickWeightedCluster(WEIGHTED, over, 99).name, 'b');
  const under = new Runtime([
    ['routing.a', '10'],
    ['routing.b', '10'],
  ]);
  assert.equal(pickWeightedCluster(WEIGHTED, under, 25).name, 'c');
  assert.equal(pickWeightedCluster(WEIGHTED, under, 50).name, 'c');
});
