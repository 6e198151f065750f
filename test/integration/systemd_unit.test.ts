// scripts/proxy.service as systemd reads it: `systemd-analyze verify` on a copy whose paths name
// this checkout (verify wants the programs of ExecStart= and ExecReload= to exist), and the
// environment file it names holding only settings that the start script reads.

import { test, type TestContext } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ENV_FILE, readEnvironmentFile, START_SCRIPT, unitSetting, unitForCheckout } from '../helpers/systemd_unit';

const BOUNDED = { timeout: 30_000 };

function systemdAnalyzeMissing(): string | false {
  const probe = spawnSync('systemd-analyze', ['--version'], { stdio: 'ignore' });
  return probe.error === undefined
    ? false
    : `systemd-analyze is not installed (Debian's systemd package; make test installs it as root): ${probe.error.message}`;
}

function tempDir(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-unit-test-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('systemd-analyze verify accepts the unit without a single warning', { ...BOUNDED, skip: systemdAnalyzeMissing() }, (t) => {
  const unit = path.join(tempDir(t), 'proxy.service');
  fs.writeFileSync(unit, unitForCheckout());
  const verify = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(verify.status, 0, verify.stderr);
  // An unknown key or a bad value is only a warning: verify still exits 0.
  assert.equal(verify.stdout + verify.stderr, '');
});

test('the environment file sets only what the start script reads, and the unit reads that file', () => {
  const read = new Set([...fs.readFileSync(START_SCRIPT, 'utf8').matchAll(/\$\{(PROXY_\w+)/g)].map((m) => m[1]));
  for (const name of Object.keys(readEnvironmentFile(ENV_FILE))) assert.ok(read.has(name), `start-proxy.sh ignores ${name}`);
  assert.deepEqual(unitSetting('EnvironmentFile'), ['/etc/proxy/proxy.env']);
  assert.equal(readEnvironmentFile(ENV_FILE).PROXY_CONFIG, '/etc/proxy/proxy.yaml');
});
