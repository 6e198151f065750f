// The binary on machines that are not fully set up: a checkout whose Rust addon is not built
// still answers --help, --version and --mode validate (the addon loads at first use), and a
// Node.js older than package.json's engines gets one line, not a stack trace.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { runScript, runToExit } from '../helpers/cli_runs';
import { makeTempDir } from '../helpers/proxy_process';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const BOUNDED = { timeout: 30_000 };

/** A copy of what bin/proxy runs, without native/: the compiled sources and their bundles (elsewhere than they were built), the build outputs, node_modules linked. */
function checkoutWithoutAddon(dir: string): string {
  for (const part of ['bin', 'scripts/check-node.js', 'package.json', 'dist/src', 'dist/bundle', 'dist/protos.json', 'dist/proto_annotations.json', 'dist/build_info.json', 'configs']) {
    fs.cpSync(path.join(ROOT, part), path.join(dir, part), { recursive: true });
  }
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return path.join(dir, 'bin', 'proxy');
}

test('without the native addon, --help, --version and --mode validate work; serving says what is missing', BOUNDED, async (t) => {
  const dir = makeTempDir();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const bin = checkoutWithoutAddon(dir);
  assert.ok(!fs.existsSync(path.join(dir, 'native')));

  const help = await runScript(bin, ['--help']);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^USAGE: proxy \[options\]/m);

  const version = await runScript(bin, ['--version']);
  assert.equal(version.code, 0, version.stderr);
  assert.match(version.stdout, /^proxy {2}version: /m);

  const validate = await runScript(bin, ['--mode', 'validate', '-c', path.join(dir, 'configs', 'default.yaml')]);
  assert.equal(validate.code, 0, validate.stderr);
  assert.equal(validate.stdout, `configuration '${path.join(dir, 'configs', 'default.yaml')}' OK\n`);

  const serve = await runScript(bin, ['-c', path.join(dir, 'configs', 'default.yaml'), '--disable-hot-restart', '--admin-address-path', path.join(dir, 'admin')]);
  assert.equal(serve.code, 1);
  assert.match(serve.stderr, /error starting the server: the native addon is not built: no native\/proxy-native\.node in /);
  assert.doesNotMatch(serve.stderr, /^\s+at /m);
});

test('a Node.js older than engines.node gets one line and exit 1', BOUNDED, async (t) => {
  const dir = makeTempDir();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  // Node 18 as far as the program can tell: the version check reads process.versions.
  const preload = path.join(dir, 'node18.js');
  fs.writeFileSync(preload, "Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '18.19.1' } });\n");
  const engines = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).engines.node as string;
  const minimum = /^>=(\d+\.\d+)/.exec(engines)![1];

  const old = await runToExit(['--version'], { env: { NODE_OPTIONS: `--require ${preload}` } });
  assert.equal(old.code, 1);
  assert.equal(old.stdout, '');
  assert.equal(old.stderr, `proxy: Node.js ${minimum} or later is required; this is v18.19.1 (${process.execPath})\n`);

  const make = spawn(process.execPath, ['--require', preload, path.join(ROOT, 'scripts', 'check-node.js')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  make.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(make, 'close')) as [number | null];
  assert.equal(code, 1);
  assert.equal(stderr, `make: Node.js ${minimum} or later is required; this is v18.19.1 (${process.execPath})\n`);
});
