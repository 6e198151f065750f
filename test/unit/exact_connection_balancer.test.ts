// exact_balance's pick: the worker holding the fewest connections, this worker on a tie (so that
// nothing is passed on for nothing), the lowest index among others tied below it. Then two
// workers' balancers in one process, over real Unix datagram inboxes: what is passed, kept and
// counted, and a worker that stops accepting.

import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { ExactConnectionBalancer, leastLoaded } from '../../src/listener/exact_connection_balancer';
import * as addon from '../../src/native/addon';
import { SharedCounts, sharedCountsBytes } from '../../src/stats/shared_counts';

test('the worker with the fewest connections; this one when it ties for fewest', () => {
  assert.equal(leastLoaded([3, 2], 0), 1);
  assert.equal(leastLoaded([2, 3], 1), 0);
  assert.equal(leastLoaded([2, 2], 0), 0);
  assert.equal(leastLoaded([2, 2], 1), 1);
  assert.equal(leastLoaded([5, 1, 1, 4], 3), 1);
  assert.equal(leastLoaded([5, 1, 1, 4], 2), 2);
  assert.equal(leastLoaded([0], 0), 0);
});

/** Two workers' balancers in this process, sharing their counts as two workers share the region's. */
function twoWorkers(t: TestContext): { balancers: [ExactConnectionBalancer, ExactConnectionBalancer]; counts: SharedCounts } {
  const words = new Int32Array(sharedCountsBytes(2) / 4);
  const id = `unit${process.pid}_${Math.random().toString(36).slice(2)}`;
  const make = (worker: number) => new ExactConnectionBalancer({ id, worker, workers: 2 }, 'test', new SharedCounts(words, 0, 2, worker + 1));
  const balancers: [ExactConnectionBalancer, ExactConnectionBalancer] = [make(0), make(1)];
  t.after(() => balancers.forEach((b) => b.close()));
  return { balancers, counts: new SharedCounts(words, 0, 2, 0) };
}

/** Descriptors standing for accepted connections: any descriptor passes over SCM_RIGHTS. */
function descriptors(n: number): number[] {
  return Array.from({ length: n }, () => addon.unixDgramSocket());
}

/** Closes, after the test, the descriptors this process holds: those kept and those received (the passed ones' originals are closed already). */
function closeAfter(t: TestContext, fds: readonly number[]): void {
  t.after(() => fds.forEach((fd) => addon.closeFd(fd)));
}

test('connections go to the worker holding fewer, through its inbox, counted as they are picked', async (t) => {
  const { balancers, counts } = twoWorkers(t);
  const received = new Promise<number[]>((resolve) => balancers[1].receive((fds) => resolve(fds)));
  const kept = balancers[0].distribute(descriptors(4));
  closeAfter(t, kept);
  assert.equal(kept.length, 2);
  const passed = await received;
  closeAfter(t, passed);
  assert.equal(passed.length, 2);
  assert.deepEqual([counts.get(0), counts.get(1)], [2, 2]);
  balancers[1].onConnectionClose();
  assert.deepEqual([counts.get(0), counts.get(1)], [2, 1]);
});

test('a worker that stops accepting is picked by no other until it accepts again', async (t) => {
  const { balancers, counts } = twoWorkers(t);
  balancers[1].setAccepting(false);
  balancers[1].setAccepting(false);
  const kept = balancers[0].distribute(descriptors(3));
  closeAfter(t, kept);
  assert.equal(kept.length, 3);
  balancers[1].setAccepting(true);
  assert.deepEqual([counts.get(0), counts.get(1)], [3, 0]);
  const received = new Promise<number[]>((resolve) => balancers[1].receive((fds) => resolve(fds)));
  assert.deepEqual(balancers[0].distribute(descriptors(1)), []);
  const passed = await received;
  closeAfter(t, passed);
  assert.equal(passed.length, 1);
  assert.deepEqual([counts.get(0), counts.get(1)], [3, 1]);
});

test('a share whose inbox is gone is kept, and counted here', (t) => {
  const { balancers, counts } = twoWorkers(t);
  balancers[1].close();
  const kept = balancers[0].distribute(descriptors(2));
  closeAfter(t, kept);
  assert.equal(kept.length, 2);
  assert.deepEqual([counts.get(0), counts.get(1)], [2, 0]);
});
