import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SystemClock } from '../../src/common/clock';

test('the system clock: monotonic time, intervals that fire until cleared', async () => {
  const clock = new SystemClock();
  const start = clock.now();
  let ticks = 0;
  const handle = clock.setInterval(() => ticks++, 5);
  // The interval is unreferenced, so something else must keep the process alive while we wait.
  await new Promise((resolve) => setTimeout(resolve, 60));
  clock.clearInterval(handle);
  const seen = ticks;
  assert.ok(seen >= 2, `${seen} ticks`);
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(ticks, seen);
  assert.ok(clock.now() - start >= 80);
});

test('the system clock: a timeout beyond one Node timer fires at its deadline, not at once', { timeout: 5000 }, async () => {
  // Node fires a setTimeout of more than 2^31 - 1 ms after 1 ms: a 30-day timeout must not.
  const clock = new SystemClock();
  let fired = false;
  const month = clock.setTimeout(() => (fired = true), 30 * 24 * 3600 * 1000);
  await new Promise((resolve) => setTimeout(resolve, 50));
  clock.clearTimeout(month);
  assert.equal(fired, false);

  // Timers of at most 20 ms stand in for the 24.8-day limit: a 70 ms timeout takes four of them.
  const short = new SystemClock(20);
  const start = short.now();
  let guard: NodeJS.Timeout | undefined;
  const firedAfter = await new Promise<number>((resolve) => {
    short.setTimeout(() => resolve(short.now() - start), 70);
    guard = setTimeout(() => resolve(-1), 2000);
  });
  clearTimeout(guard);
  assert.ok(firedAfter >= 70 && firedAfter < 1000, `fired after ${firedAfter} ms`);

  // Cleared between two of its timers, it never fires.
  let cleared = false;
  const handle = short.setTimeout(() => (cleared = true), 50);
  await new Promise((resolve) => setTimeout(resolve, 30));
  short.clearTimeout(handle);
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(cleared, false);
});

test('the system clock: an interval beyond one Node timer fires once a period, not every millisecond', { timeout: 5000 }, async () => {
  const clock = new SystemClock();
  let ticks = 0;
  const month = clock.setInterval(() => ticks++, 30 * 24 * 3600 * 1000);
  await new Promise((resolve) => setTimeout(resolve, 50));
  clock.clearInterval(month);
  assert.equal(ticks, 0);

  // Timers of at most 20 ms stand in for the 24.8-day limit: a 50 ms period, cleared after ~175 ms.
  const short = new SystemClock(20);
  const start = short.now();
  const at: number[] = [];
  const handle = short.setInterval(() => at.push(short.now() - start), 50);
  await new Promise((resolve) => setTimeout(resolve, 175));
  short.clearInterval(handle);
  const seen = at.length;
  await new Promise((resolve) => setTimeout(resolve, 80));
  assert.equal(at.length, seen, 'cleared');
  assert.ok(seen >= 2 && seen <= 3, `${seen} ticks at ${at.join(', ')} ms`);
  at.forEach((ms, i) => assert.ok(ms >= 50 * (i + 1), `tick ${i + 1} at ${ms} ms`));
});
