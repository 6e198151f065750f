// sd_notify messages and their delivery to a datagram socket this test binds, as systemd would.

import { test, type TestContext } from 'node:test';
import * as assert from 'node:assert/strict';
import * as addon from '../../src/native/addon';
import { NativeError } from '../../src/native/addon';
import { notifyMessage, SystemdNotifier } from '../../src/server/systemd_notify';

const BOUNDED = { timeout: 10_000 };

function inbox(t: TestContext, what: string): { name: string; fd: number } {
  const name = `@proxy_notify_unit_test_${process.pid}_${what}`;
  const fd = addon.unixDgramBind(name);
  t.after(() => addon.closeFd(fd));
  return { name, fd };
}

test('a message is one VAR=value line per field, in order, each value on one line', () => {
  assert.equal(notifyMessage({ READY: '1', STATUS: 'epoch 0: serving' }), 'READY=1\nSTATUS=epoch 0: serving');
  assert.equal(notifyMessage({ STATUS: 'failed to start: a\nb' }), 'STATUS=failed to start: a b');
});

test('the notifier takes NOTIFY_SOCKET out of the environment and sends there', BOUNDED, (t) => {
  const { name, fd } = inbox(t, 'send');
  const env: NodeJS.ProcessEnv = { NOTIFY_SOCKET: name, OTHER: 'kept' };
  const notifier = SystemdNotifier.takeFromEnvironment(env);
  assert.deepEqual(env, { OTHER: 'kept' });
  notifier.notify({ READY: '1', STATUS: 'serving' });
  assert.deepEqual(addon.unixDgramRecv(fd, 4096, 0), { data: Buffer.from('READY=1\nSTATUS=serving'), fds: [] });
});

test('without NOTIFY_SOCKET (or an empty one) nothing is sent', BOUNDED, () => {
  for (const env of [{}, { NOTIFY_SOCKET: '' }] as NodeJS.ProcessEnv[]) {
    SystemdNotifier.takeFromEnvironment(env).notify({ READY: '1' });
    assert.deepEqual(env, {});
  }
});

test('a socket nobody listens on is an error for the caller to report', BOUNDED, () => {
  const notifier = SystemdNotifier.takeFromEnvironment({ NOTIFY_SOCKET: `@proxy_notify_unit_test_${process.pid}_nobody` });
  assert.throws(() => notifier.notify({ READY: '1' }), (error: unknown) => error instanceof NativeError && error.code === 'ECONNREFUSED');
});
