// scripts/ensure-rust.sh, which the addon's build runs first: it leaves a recent enough Rust
// alone, and plans Debian's cargo-web when cargo is absent or as old as Debian 12's own (0.66).
// --dry-run prints the apt-get commands instead of running them, so this machine is untouched.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { makeTempDir } from '../helpers/proxy_process';

const SCRIPT = path.resolve(__dirname, '..', '..', '..', 'scripts', 'ensure-rust.sh');
const SYSTEM_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';
const BOUNDED = { timeout: 30_000 };

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function ensureRust(pathDirs: readonly string[], prefix: readonly string[] = []): Promise<Outcome> {
  const [file, ...args] = [...prefix, 'bash', SCRIPT, '--dry-run'];
  try {
    const { stdout, stderr } = await promisify(execFile)(file!, args, { env: { PATH: [...pathDirs, SYSTEM_PATH].join(':') }, timeout: 20_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** A directory with `cargo` and `rustc` that print `version`, as the real ones do. */
function fakeToolchain(dir: string, version: string): string {
  const bin = path.join(dir, `rust-${version}`);
  fs.mkdirSync(bin);
  for (const tool of ['cargo', 'rustc']) {
    fs.writeFileSync(path.join(bin, tool), `#!/bin/sh\necho "${tool} ${version} (0000000 2026-01-01)"\n`, { mode: 0o755 });
  }
  return bin;
}

function withoutSystemCargo(t: { skip(message: string): void }): boolean {
  const present = SYSTEM_PATH.split(':').some((dir) => fs.existsSync(path.join(dir, 'cargo')));
  if (present) t.skip('this machine has cargo in a system directory, so "cargo absent" cannot be arranged');
  return !present;
}

test('a recent enough Rust is left alone', BOUNDED, async (t) => {
  const dir = makeTempDir();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  assert.deepEqual(await ensureRust([fakeToolchain(dir, '1.85.0')]), { code: 0, stdout: '', stderr: '' });
  assert.deepEqual(await ensureRust([fakeToolchain(dir, '1.96.1')]), { code: 0, stdout: '', stderr: '' });
});

test("Debian 12's cargo 0.66 is replaced by cargo-web", BOUNDED, async (t) => {
  const dir = makeTempDir();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const outcome = await ensureRust([fakeToolchain(dir, '0.66.0')]);
  assert.equal(outcome.code, 0, outcome.stderr);
  const lines = outcome.stdout.trim().split('\n');
  assert.equal(lines[0], 'ensure-rust: native/ needs Rust 1.85 or later; found cargo 0.66.0, rustc 0.66.0');
  assert.equal(lines.at(-1), '+ apt-get install -y --no-install-recommends cargo-web');
  // apt-get update only when apt does not know the package yet.
  assert.ok(lines.length === 2 || (lines.length === 3 && lines[1] === '+ apt-get update'), outcome.stdout);
});

test('an absent cargo is installed; without root the message says how', BOUNDED, async (t) => {
  if (!withoutSystemCargo(t)) return;
  const absent = await ensureRust([]);
  assert.equal(absent.code, 0, absent.stderr);
  assert.match(absent.stdout, /^ensure-rust: native\/ needs Rust 1\.85 or later; found cargo absent, rustc absent\n/);
  assert.match(absent.stdout, /\+ apt-get install -y --no-install-recommends cargo-web\n$/);

  const unprivileged = await ensureRust([], ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups']);
  assert.equal(unprivileged.code, 1);
  assert.match(unprivileged.stderr, /^ensure-rust: cannot install it here \(needs root and apt-get\)\. Install Rust 1\.85 or later/);
  assert.match(unprivileged.stderr, /apt-get update && apt-get install cargo-web/);
});
