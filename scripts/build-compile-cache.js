#!/usr/bin/env node
// Makes dist/compile_cache/ (src/common/compile_cache.ts): V8's code for every module the proxy
// loads, one file per set of V8 flags (the supervisor's, a worker's). One recording run makes it:
// `--mode validate` of configs/default.yaml, then the same configuration, its ports made 0, served
// until LIVE and quit, every process under scripts/compile-cache-recorder.js.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const v8 = require('node:v8');
const yaml = require('js-yaml');

const root = path.resolve(__dirname, '..');
const proxyBin = path.join(root, 'bin', 'proxy');
const { buildCacheDir } = require('../dist/src/common/compile_cache.js');
const START_TIMEOUT_MS = 30_000;

function fail(message) {
  process.stderr.write(`build-compile-cache: ${message}\n`);
  process.exit(1);
}

/** configs/default.yaml with every port 0, so that the run binds nothing another process holds. */
function writeConfig(dir) {
  const config = yaml.load(fs.readFileSync(path.join(root, 'configs', 'default.yaml'), 'utf8'));
  config.admin.address.socket_address.port_value = 0;
  for (const listener of config.static_resources.listeners) listener.address.socket_address.port_value = 0;
  const file = path.join(dir, 'bootstrap.yaml');
  fs.writeFileSync(file, yaml.dump(config));
  return file;
}

function adminRequest(address, method, pathname) {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  return new Promise((resolve, reject) => {
    const request = http.request({ host, port, method, path: pathname }, (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

async function serveUntilLive(config, dir, env) {
  const addressFile = path.join(dir, 'admin_address');
  const args = ['-c', config, '--admin-address-path', addressFile, '--concurrency', '1', '--disable-hot-restart', '-l', 'error'];
  const child = spawn(process.execPath, [proxyBin, ...args, '--base-id', String(process.pid)], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const deadline = Date.now() + START_TIMEOUT_MS;
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) fail(`the proxy exited before it was LIVE (${child.exitCode ?? child.signalCode})`);
      if (Date.now() > deadline) fail(`the proxy was not LIVE within ${START_TIMEOUT_MS} ms`);
      const address = fs.existsSync(addressFile) ? fs.readFileSync(addressFile, 'utf8').trim() : '';
      const ready = address === '' ? null : await adminRequest(address, 'GET', '/ready').catch(() => null);
      if (ready?.status === 200) {
        await adminRequest(address, 'POST', '/quitquitquit');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Unreferenced: the child keeps the loop alive while it runs; the timer must not once it is gone.
    const status = await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, START_TIMEOUT_MS, null).unref())]);
    if (status === null || status.code !== 0) fail(`the proxy did not exit cleanly after /quitquitquit (${JSON.stringify(status)})`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** Each process's recording, merged by flags; of two recordings of a module, the larger holds more compiled code. */
function merge(partsDir) {
  const byFlags = new Map();
  for (const part of fs.readdirSync(partsDir).filter((name) => name.endsWith('.part'))) {
    const flags = part.slice(0, part.indexOf('.'));
    const cache = byFlags.get(flags) ?? new Map();
    byFlags.set(flags, cache);
    for (const [relative, entry] of v8.deserialize(fs.readFileSync(path.join(partsDir, part)))) {
      const kept = cache.get(relative);
      if (kept === undefined || entry.data.length > kept.data.length) cache.set(relative, entry);
    }
  }
  return byFlags;
}

async function main() {
  const cacheDir = buildCacheDir(root);
  fs.rmSync(cacheDir, { recursive: true, force: true });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-compile-cache-'));
  try {
    const parts = path.join(work, 'parts');
    fs.mkdirSync(parts);
    const recorder = path.join(__dirname, 'compile-cache-recorder.js');
    const env = {
      ...process.env,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require "${recorder}"`.trim(),
      PROXY_COMPILE_CACHE_RECORD: parts,
    };
    const config = writeConfig(work);
    const validate = spawnSync(process.execPath, [proxyBin, '--mode', 'validate', '-c', config], { env, encoding: 'utf8' });
    if (validate.status !== 0) fail(`--mode validate failed: ${validate.stderr || validate.stdout}`);
    await serveUntilLive(config, work, env);

    const byFlags = merge(parts);
    if (byFlags.size === 0) fail('no process recorded its modules');
    fs.mkdirSync(cacheDir, { recursive: true });
    let modules = 0;
    let bytes = 0;
    for (const [flags, cache] of byFlags) {
      const serialized = v8.serialize(cache);
      fs.writeFileSync(path.join(cacheDir, `${flags}.bin`), serialized);
      modules += cache.size;
      bytes += serialized.length;
    }
    process.stdout.write(`compile cache: ${modules} modules for ${byFlags.size} sets of V8 flags, ${Math.round(bytes / 1024)} KiB in ${path.relative(root, cacheDir)}/\n`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => fail(error.stack ?? String(error)));
