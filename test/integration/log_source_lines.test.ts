import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { PROXY_BIN, startProxy } from '../helpers/proxy_process';
import { routedBootstrap } from '../helpers/routed_bootstrap';

const PACKAGE_ROOT = path.resolve(path.dirname(PROXY_BIN), '..');

test('each line of the default format names the .ts line that logged it', { timeout: 30_000 }, async () => {
  // Nothing listens on port 9; no request is sent.
  const proxy = await startProxy(routedBootstrap(9), ['-l', 'info']);
  await proxy.cleanup();
  const located = [...proxy.stderr.matchAll(/^\[[^\]]*\]\[\d+\]\[\w+\]\[\w+\] \[(src\/[^:\]]+\.ts):(\d+)\] (.*)$/gm)];
  assert.ok(located.length >= 4, `located lines in:\n${proxy.stderr}`);
  for (const [line, file, number] of located) {
    const statement = fs.readFileSync(path.join(PACKAGE_ROOT, file!), 'utf8').split('\n')[Number(number) - 1] ?? '';
    // The statement that logged opens its call on that line: `log.info(` or `mainLog.warn(`.
    assert.match(statement, /\.(trace|debug|info|warn|error|critical)\(/, `${line}\nnames: ${statement}`);
  }
});
