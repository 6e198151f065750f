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
