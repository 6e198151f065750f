// scripts/proxy.service and scripts/proxy.env as the tests run them: the unit with its install
// prefix (/opt/proxy) replaced by this checkout, its command lines as argument lists, and the
// settings of the environment file.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
export const UNIT_FILE = path.join(REPO_ROOT, 'scripts', 'proxy.service');
export const ENV_FILE = path.join(REPO_ROOT, 'scripts', 'proxy.env');
export const START_SCRIPT = path.join(REPO_ROOT, 'scripts', 'start-proxy.sh');
const INSTALL_PREFIX = '/opt/proxy';

/** The unit's text with this checkout in place of /opt/proxy. */
export function unitForCheckout(): string {
  return fs.readFileSync(UNIT_FILE, 'utf8').replaceAll(INSTALL_PREFIX, REPO_ROOT);
}

/**
 * The words of the unit's one `key=` line (ExecStart, ExecReload, ...), with `$NAME` replaced from
 * `vars` as systemd replaces $MAINPID. The unit's commands need no quoting, so none is parsed.
 */
export function unitSetting(key: string, vars: Readonly<Record<string, string>> = {}): string[] {
  const lines = unitForCheckout()
    .split('\n')
    .filter((line) => line.startsWith(`${key}=`));
  assert.equal(lines.length, 1, `one ${key}= line in ${UNIT_FILE}`);
  return lines[0]!
    .slice(key.length + 1)
    .split(/\s+/)
    .filter((word) => word !== '')
    .map((word) =>
      word.replace(/\$(\w+)/g, (_, name: string) => {
        const value = vars[name];
        if (value === undefined) throw new Error(`${key}= uses $${name}, which the test did not give`);
        return value;
      }),
    );
}

/** An EnvironmentFile's settings: `NAME=value` lines, without comments and blank lines. */
export function readEnvironmentFile(file: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    assert.ok(eq > 0, `${file}: not a NAME=value line: ${line}`);
    settings[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return settings;
}
