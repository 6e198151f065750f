// SerialQueue: a task runs at once when nothing is pending; otherwise after the tasks before it,
// in order, whether they finished synchronously, resolved or rejected.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SerialQueue } from '../../src/common/serial_queue';

test('synchronous tasks run at once; one after a pending promise waits for it, in order', async () => {
  const queue = new SerialQueue();
  const ran: string[] = [];
  queue.run(() => void ran.push('sync'));
  assert.deepEqual(ran, ['sync']);

  let finishSlow!: () => void;
  queue.run(() => {
    ran.push('slow start');
    return new Promise<void>((resolve) => (finishSlow = resolve)).then(() => void ran.push('slow end'));
  });
  queue.run(() => void ran.push('after slow'));
  queue.run(() => Promise.reject(new Error('failed')).finally(() => ran.push('rejected')));
  let last!: Promise<void>;
  queue.run(() => (last = Promise.resolve().then(() => void ran.push('last'))));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(ran, ['sync', 'slow start'], 'nothing overtakes the pending task');
  finishSlow();
  await new Promise((resolve) => setImmediate(resolve));
  await last;
  assert.deepEqual(ran, ['sync', 'slow start', 'slow end', 'after slow', 'rejected', 'last']);

  // Idle again: synchronous once more.
  queue.run(() => void ran.push('idle'));
  assert.equal(ran.at(-1), 'idle');
});
