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
