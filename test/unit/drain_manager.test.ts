// Envoy's drain decision with an injected clock and random source: nothing before the drain,
// everything with `immediate`, a share growing with elapsed time with `gradual`.

import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';

import { DrainManager, gradualDrainClose } from '../../src/hot_restart/drain_manager';
import { ManualClock } from '../helpers/manual_clock';


/** Each value 0..n-1 once per n calls: drainClose's answers count the share exactly. */
function sweep(n: number): () => number {
  let next = 0;
  return () => next++ % n;
}

function closedShare(manager: DrainManager, draws: number): number {
  let closed = 0;
  for (let i = 0; i < draws; i++) if (manager.drainClose()) closed++;
  return closed / draws;
}

test('no connection is closed before a drain starts', () => {
  for (const strategy of ['gradual', 'immediate'] as const) {
    const manager = new DrainManager({ strategy, drainTimeS: 600, clock: new ManualClock(), random: () => 0 });
    assert.equal(manager.draining, false);
    assert.equal(manager.drainClose(), false);
  }
});

test('immediate closes every connection from the start of the drain', (t) => {
  const manager = new DrainManager({ strategy: 'immediate', drainTimeS: 600, clock: new ManualClock(), random: sweep(600) });
  t.after(() => manager.close());
  manager.startDrainSequence();
  assert.equal(manager.draining, true);
  assert.equal(closedShare(manager, 600), 1);
});

test('gradual closes a share that grows with elapsed time, then all after the deadline', (t) => {
  const clock = new ManualClock();
  const manager = new DrainManager({ strategy: 'gradual', drainTimeS: 100, clock, random: sweep(100) });
  t.after(() => manager.close());
  manager.startDrainSequence();
  assert.equal(closedShare(manager, 100), 0);
  // Envoy truncates the remaining time to whole seconds: half a second in, one second has elapsed.
  clock.advance(500);
  assert.equal(closedShare(manager, 100), 0.01);
  clock.advance(25_000);
  assert.equal(closedShare(manager, 100), 0.26);
  clock.advance(49_500);
  assert.equal(closedShare(manager, 100), 0.75);
  clock.advance(25_000);
  assert.equal(closedShare(manager, 100), 1);
  clock.advance(1_000_000);
  assert.equal(closedShare(manager, 100), 1);
});

test('the gradual decision compares elapsed whole seconds with the draw modulo the drain time', () => {
  assert.equal(gradualDrainClose(600, 599_500, 0), true);
  assert.equal(gradualDrainClose(600, 599_500, 1), false);
  assert.equal(gradualDrainClose(600, 300_000, 600 + 299), true);
  assert.equal(gradualDrainClose(600, 300_000, 600 + 300), false);
  assert.equal(gradualDrainClose(600, 0, 599), true);
  assert.equal(gradualDrainClose(0, 0, 12345), true);
});

test('a failed health check closes every connection, draining or not', () => {
  let failed = false;
  const manager = new DrainManager({
    strategy: 'gradual',
    drainTimeS: 600,
    clock: new ManualClock(),
    random: () => 599,
    healthCheckFailed: () => failed,
  });
  assert.equal(manager.drainClose(), false);
  failed = true;
  assert.equal(manager.drainClose(), true);
});

test('the completion callback runs when the drain time is over', { timeout: 5000 }, async (t) => {
  const manager = new DrainManager({ strategy: 'gradual', drainTimeS: 0 });
  t.after(() => manager.close());
  // The drain timer does not hold the process open (a server's sockets do): hold it here.
  const holdOpen = setTimeout(() => {}, 5000);
  t.after(() => clearTimeout(holdOpen));
  const done = new EventEmitter();
  manager.startDrainSequence(() => done.emit('complete'));
  await once(done, 'complete');
  assert.equal(manager.drainClose(), true);
});

test('close cancels the completion callback; a second drain sequence is refused', async (t) => {
  const manager = new DrainManager({ strategy: 'immediate', drainTimeS: 0 });
  t.after(() => manager.close());
  let completed = false;
  manager.startDrainSequence(() => (completed = true));
  assert.throws(() => manager.startDrainSequence(), /already started/);
  manager.close();
  // Timers fire in deadline order: the cancelled 0 ms one would have run before this (ref'd) one.
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(completed, false);
});
