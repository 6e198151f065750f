// The compile cache: a module whose source matches its entry runs from the cached code with the
// arguments node gives a module; an edited module (same length, so V8's own check passes), code
// made under other V8 flags, or a damaged cache file compile anew; and the build's cache matches
// the build's bundles, for the supervisor's flags and a worker's. The hook changes the process's module
// loader, so each case runs in a child process.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { WORKER_NODE_FLAGS } from '../../src/server/worker_launch';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const COMPILE_CACHE = path.join(ROOT, 'dist', 'src', 'common', 'compile_cache.js');

// record: writes the cache of module.js to cache.bin. use: loads it with the cache and prints
// what the hook counted and what the module exported. build <module>: the build's cache.
const FIXTURE = `
const cc = require(${JSON.stringify(COMPILE_CACHE)});
const fs = require('node:fs'), path = require('node:path'), v8 = require('node:v8');
const [mode, target] = process.argv.slice(2);
if (mode === 'record') {
  const file = path.join(__dirname, 'module.js');
  const content = fs.readFileSync(file, 'utf8');
  const script = cc.moduleScript(content, file);
  const Module = require('node:module');
  const recorded = Object.assign(new Module(file, module), { filename: file, paths: Module._nodeModulePaths(__dirname) });
  cc.runModule(recorded, script, file);
  fs.writeFileSync(path.join(__dirname, 'cache.bin'), v8.serialize(new Map([['module.js', { sourceHash: cc.sourceHash(content), data: script.createCachedData() }]])));
} else if (mode === 'use') {
  const use = cc.useCompileCache(cc.readCompileCache(path.join(__dirname, 'cache.bin')), __dirname);
  const exported = require('./module.js');
  console.log(JSON.stringify({ use, exported }));
} else {
  const use = cc.useBuildCompileCache(${JSON.stringify(ROOT)});
  require(target);
  console.log(JSON.stringify({ use }));
}
`;

const MODULE = (value: number) => `'use strict';
const helper = require('./helper');
module.exports = { value: ${value}, helper: helper.name, dir: __dirname, file: __filename, resolved: require.resolve('./helper'), mainIsFixture: require.main === module.parent, self: this === module.exports };
`;

function fixture(dir: string, args: readonly string[], flags: readonly string[] = []): string {
  const result = spawnSync(process.execPath, [...flags, path.join(dir, 'fixture.js'), ...args], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout;
}

function record(dir: string): void {
  fixture(dir, ['record']);
}

function run(dir: string, args: readonly string[], flags: readonly string[] = []): { use: { fromCache: number; stale: number }; exported?: Record<string, unknown> } {
  return JSON.parse(fixture(dir, args, flags));
}

function withDir(body: (dir: string) => void): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-compile-cache-'));
  try {
    fs.writeFileSync(path.join(dir, 'fixture.js'), FIXTURE);
    fs.writeFileSync(path.join(dir, 'helper.js'), "exports.name = 'helper';\n");
    fs.writeFileSync(path.join(dir, 'module.js'), MODULE(1));
    body(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('a module whose source matches runs from the cache, with the arguments node gives it', () => {
  withDir((dir) => {
    record(dir);
    const { use, exported } = run(dir, ['use']);
    assert.deepEqual(use, { fromCache: 1, stale: 0 });
    assert.deepEqual(exported, {
      value: 1,
      helper: 'helper',
      dir,
      file: path.join(dir, 'module.js'),
      resolved: path.join(dir, 'helper.js'),
      mainIsFixture: true,
      self: true,
    });
  });
});

test('an edited module of the same length compiles anew and runs the new source', () => {
  withDir((dir) => {
    record(dir);
    fs.writeFileSync(path.join(dir, 'module.js'), MODULE(2));
    const { use, exported } = run(dir, ['use']);
    assert.deepEqual(use, { fromCache: 0, stale: 1 });
    assert.equal(exported!.value, 2);
  });
});

test('code made under other V8 flags is refused by V8 and the module compiles anew', () => {
  withDir((dir) => {
    record(dir);
    const { use, exported } = run(dir, ['use'], WORKER_NODE_FLAGS);
    assert.deepEqual(use, { fromCache: 0, stale: 1 });
    assert.equal(exported!.value, 1);
  });
});

test('a damaged or missing cache file means compiling, not failing', () => {
  withDir((dir) => {
    record(dir);
    const cache = path.join(dir, 'cache.bin');
    fs.writeFileSync(cache, fs.readFileSync(cache).subarray(0, 100));
    assert.deepEqual(run(dir, ['use']), { use: { fromCache: 0, stale: 0 }, exported: run(dir, ['use']).exported });
    fs.rmSync(cache);
    assert.equal(run(dir, ['use']).exported!.value, 1);
  });
});

test("the build's cache holds this build's bundles, for the supervisor's flags and a worker's", () => {
  withDir((dir) => {
    const supervisor = run(dir, ['build', path.join(ROOT, 'dist', 'bundle', 'proxy.js')]).use;
    assert.deepEqual(supervisor, { fromCache: 1, stale: 0 });
    const worker = run(dir, ['build', path.join(ROOT, 'dist', 'bundle', 'worker.js')], WORKER_NODE_FLAGS).use;
    assert.deepEqual(worker, { fromCache: 1, stale: 0 });
  });
});
