import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { test } from 'node:test';
import { contentionHandler } from '../../src/admin/contention_handler';
import { MutexStats, MutexTracer } from '../../src/shared_memory/mutex_tracer';
import { ContentionReporter } from '../../src/server/contention_reporter';

test("a worker's waits of one turn make one report; the next turn's another", async () => {
  const reports: MutexStats[] = [];
  const reporter = new ContentionReporter((r) => reports.push(r));
  reporter.record(10);
  reporter.record(5);
  assert.deepEqual(reports, []);
  await nextTurn();
  reporter.record(7);
  await nextTurn();
  assert.deepEqual(reports, [
    { numContentions: 2, currentWaitCycles: 5, lifetimeWaitCycles: 15 },
    { numContentions: 1, currentWaitCycles: 7, lifetimeWaitCycles: 7 },
  ]);
});

test("the supervisor's tracer adds workers' reports to its own waits, the latest wait current", async () => {
  const tracer = new MutexTracer();
  tracer.record(100);
  tracer.merge({ numContentions: 2, currentWaitCycles: 5, lifetimeWaitCycles: 15 });
  assert.deepEqual(tracer.stats(), { numContentions: 3, currentWaitCycles: 5, lifetimeWaitCycles: 115 });
  const response = await contentionHandler(tracer).handle({ method: 'GET', path: '/contention', query: new Map(), headers: {}, body: Buffer.alloc(0), role: null });
  assert.equal(response.body, '{\n "num_contentions": "3",\n "current_wait_cycles": "5",\n "lifetime_wait_cycles": "115"\n}\n');
});
