import assert from 'node:assert/strict';
import { test } from 'node:test';
import { workerEnvironment } from '../../src/server/worker_launch';

test("a worker's environment is the supervisor's plus glibc's 64 MiB top pad", () => {
  const env = { PATH: '/usr/bin', RESTART_EPOCH: '3' };
  assert.deepEqual(workerEnvironment(env), { PATH: '/usr/bin', RESTART_EPOCH: '3', MALLOC_TOP_PAD_: '67108864' });
  assert.deepEqual(env, { PATH: '/usr/bin', RESTART_EPOCH: '3' }, 'the environment given is left as it was');
});

test("an operator's MALLOC_TOP_PAD_ wins, also an empty one", () => {
  assert.equal(workerEnvironment({ MALLOC_TOP_PAD_: '131072' }).MALLOC_TOP_PAD_, '131072');
  assert.equal(workerEnvironment({ MALLOC_TOP_PAD_: '' }).MALLOC_TOP_PAD_, '');
});

test('a worker starts without NODE_EXTRA_CA_CERTS, which Node reads at each start and no process of the proxy uses', () => {
  const env = { PATH: '/usr/bin', NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt' };
  assert.deepEqual(workerEnvironment(env), { PATH: '/usr/bin', MALLOC_TOP_PAD_: '67108864' });
  assert.equal(env.NODE_EXTRA_CA_CERTS, '/etc/ssl/certs/ca-certificates.crt', 'the environment given is left as it was');
});
