import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EdfScheduler } from '../../src/upstream/worker/lb/edf_scheduler';

const weightOf =
  (weights: readonly number[]) =>
  (item: number): number =>
    weights[item];

test('an empty scheduler picks nothing', () => {
  assert.equal(new EdfScheduler<number>().pickAndAdd(() => 1), null);
});

test('equal weights come out in insertion order, round after round (FIFO ties)', () => {
  const scheduler = new EdfScheduler<number>();
  const n = 16;
  for (let i = 0; i < n; i++) scheduler.add(1, i);
  for (let round = 0; round < 8; round++) {
    const picks = Array.from({ length: n }, () => scheduler.pickAndAdd(() => 1));
    assert.deepEqual(picks, [...Array(n).keys()]);
  }
});

test('over one period each item is picked as many times as its weight', () => {
  const n = 32;
  const weights = Array.from({ length: n }, (_, i) => i + 1);
  const scheduler = new EdfScheduler<number>();
  weights.forEach((w, i) => scheduler.add(w, i));
  const counts = new Array<number>(n).fill(0);
  const period = (n * (n + 1)) / 2;
  for (let i = 0; i < period; i++) counts[scheduler.pickAndAdd(weightOf(weights))!]++;
  assert.deepEqual(counts, weights);
});

test('weights 1:2:3 give the earliest-deadline sequence with ties broken FIFO', () => {
  const weights = [1, 2, 3];
  const scheduler = new EdfScheduler<number>();
  weights.forEach((w, i) => scheduler.add(w, i));
  // Deadlines: 1/3 (2), 1/2 (1), 2/3 (2), then 1 for all three, in the order they were re-added.
  const picks = Array.from({ length: 6 }, () => scheduler.pickAndAdd(weightOf(weights)));
  assert.deepEqual(picks, [2, 1, 2, 0, 1, 2]);
});

test('a weight change applies from the next time the item is scheduled', () => {
  const weights = [1, 1];
  const scheduler = new EdfScheduler<number>();
  scheduler.add(1, 0);
  scheduler.add(1, 1);
  weights[0] = 4;
  const counts = [0, 0];
  for (let i = 0; i < 50; i++) counts[scheduler.pickAndAdd(weightOf(weights))!]++;
  assert.deepEqual(counts, [40, 10]);
});
