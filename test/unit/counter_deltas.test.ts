// CounterDeltas (src/stats/sinks/counter_deltas.ts): each counter's increase between flushes, by
// slot, as the statsd sinks and report_counters_as_deltas send it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CounterDeltas } from '../../src/stats/sinks/counter_deltas';
import { scalarList, type ScalarSample } from '../helpers/histogram_samples';

const at = (id: number, value: number, kind: ScalarSample['kind'] = 'counter'): ScalarSample => ({ name: `s${id}`, id, kind, value, used: true });

test('a counter gains its value at first, then what it gained since the previous flush; gauges gain nothing', () => {
  const deltas = new CounterDeltas();
  assert.deepEqual([...deltas.update(scalarList([at(0, 5), at(1, 9, 'gauge'), at(40, 2)]))], [5, 0, 2]);
  assert.deepEqual([...deltas.update(scalarList([at(0, 8), at(1, 3, 'gauge'), at(40, 2)]))], [3, 0, 0]);
  // Positions follow the list: a counter published since lands anywhere in the name order.
  assert.deepEqual([...deltas.update(scalarList([at(7, 1), at(0, 10), at(40, 6)]))], [1, 2, 4]);
});

test('a counter reset since the previous flush gained what it reads now', () => {
  const deltas = new CounterDeltas();
  deltas.update(scalarList([at(3, 100)]));
  assert.deepEqual([...deltas.update(scalarList([at(3, 4)]))], [4]);
  assert.deepEqual([...deltas.update(scalarList([at(3, 6)]))], [2]);
});

test('a counter without a slot gains nothing: it cannot be told from another', () => {
  const deltas = new CounterDeltas();
  assert.deepEqual([...deltas.update(scalarList([{ name: 'x', kind: 'counter', value: 3, used: true }]))], [0]);
});
