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

test('the system clock: a Timer is enabled again in place, refreshed, disabled, and exact past one Node timer', { timeout: 5000 }, async () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const clock = new SystemClock(20);
  const start = clock.now();
  const fired: number[] = [];
  const timer = clock.createTimer(() => fired.push(clock.now() - start));
  // 70 ms is past the 20 ms stand-in for Node's limit: it fires at 70, not at 20.
  timer.enable(70);
  await sleep(150);
  assert.equal(fired.length, 1);
  assert.ok(fired[0] >= 70 && fired[0] < 140, `fired at ${fired[0]} ms`);
  assert.equal(timer.enabled, false);

  // refresh() restarts the delay; a disabled timer does not fire; enable() arms it again.
  const short = new SystemClock();
  let count = 0;
  const activity = short.createTimer(() => count++);
  activity.enable(40);
  await sleep(25);
  activity.refresh();
  await sleep(25);
  assert.equal(count, 0, 'refreshed at 25 ms, so not due before 65 ms');
  await sleep(40);
  assert.equal(count, 1);
  activity.refresh();
  await sleep(60);
  assert.equal(count, 1, 'refresh() does not re-arm a timer that has fired');
  activity.enable(20);
  activity.disable();
  await sleep(40);
  assert.equal(count, 1, 'disabled');
  activity.enable(20);
  await sleep(60);
  assert.equal(count, 2);
  activity.close();
  timer.close();
});
