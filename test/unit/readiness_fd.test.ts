// PROXY_READY_FD: taken out of the environment (workers must not see it), a newline written
// and the descriptor closed once, a value that names no descriptor refused.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { ReadinessFd } from '../../src/server/readiness_fd';

test('a newline, then the descriptor is closed; once only', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-ready-fd-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'ready');
  const fd = fs.openSync(file, 'w');
  const env: NodeJS.ProcessEnv = { PROXY_READY_FD: String(fd), OTHER: 'kept' };
  const readiness = ReadinessFd.takeFromEnvironment(env);
  assert.deepEqual(env, { OTHER: 'kept' });
  readiness.announceServing();
  readiness.announceServing();
  assert.equal(fs.readFileSync(file, 'utf8'), '\n');
  assert.throws(() => fs.fstatSync(fd), { code: 'EBADF' });
});

test('without the variable nothing happens; a value naming no inherited descriptor is refused', () => {
  ReadinessFd.takeFromEnvironment({}).announceServing();
  for (const value of ['x', '1', '-3']) {
    assert.throws(() => ReadinessFd.takeFromEnvironment({ PROXY_READY_FD: value }).announceServing(), {
      message: `PROXY_READY_FD=${value} does not name an inherited descriptor`,
    });
  }
});
