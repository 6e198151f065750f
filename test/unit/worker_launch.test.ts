import assert from 'node:assert/strict';
import { test } from 'node:test';
import { workerEnvironment } from '../../src/server/worker_launch';

test("a worker's environment is the supervisor's plus glibc's 64 MiB top pad", () => {
  const env = { PATH: '/usr/bin', RESTART_EPOCH: '3' };
  assert.deepEqual(workerEnvironment(env), { PATH: '/usr/bin', RESTART_EPOCH: '3', MALLOC_TOP_PAD_: '67108864' });
  assert.deepEqual(env, { PATH: '/usr/bin', RESTART_EPOCH: '3' }, 'the supervisor keeps its own');
});

test("an operator's MALLOC_TOP_PAD_ wins, also an empty one", () => {
  assert.equal(workerEnvironment({ MALLOC_TOP_PAD_: '131072' }).MALLOC_TOP_PAD_, '131072');
  assert.equal(workerEnvironment({ MALLOC_TOP_PAD_: '' }).MALLOC_TOP_PAD_, '');
});
