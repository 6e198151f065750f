// The server.* stats Envoy 1.16 has and the node it fills in, through the real binary:
// memory_physical_size, initialization_time_ms, the failure counters (a fault injected with
// NODE_OPTIONS=--require makes a worker fail an assertion and an admin handler throw), and the
// bootstrap node's user agent and extensions in /config_dump.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makeTempDir, RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { startUpstream, Upstream } from '../helpers/http_peers';
import { routedBootstrap } from '../helpers/routed_bootstrap';

// Loaded into the supervisor and the worker before the proxy: in the worker (the process forked
// from worker_entry.js, where only GET /memory asks for them), the memory figures fail an
// assertion, followed by two more exceptions (a broken worker fails on), and the channel never
// says that the worker's 'fatal' message left; in the supervisor, the second /memory's own
// figures throw (asked from inside an admin handler's handle(), which only /memory's does).
const FAULTS = `'use strict';
const assert = require('node:assert');
const real = process.memoryUsage.bind(process);
let handlerCalls = 0;
if (process.send) {
  const send = process.send.bind(process);
  process.send = (m, ...rest) => (m && m.type === 'fatal' ? send(m) : send(m, ...rest));
}
process.memoryUsage = Object.assign(() => {
  const stack = new Error().stack;
  if (process.argv[1].endsWith('worker_entry.js')) {
    for (let n = 0; n < 2; n++) process.nextTick(() => { throw new Error('injected echo'); });
    throw new assert.AssertionError({ message: 'injected worker assertion' });
  }
  if (stack.includes('at Object.handle ') && ++handlerCalls === 2) throw new Error('injected admin failure');
  return real();
}, { rss: process.memoryUsage.rss });
`;

/** Resident bytes of `pid`, from /proc. */
function residentBytes(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(kb![1]) * 1024;
}

describe('server.* stats and the bootstrap node', { timeout: 60_000 }, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  let dir: string;
  let startMs: number;

  before(async () => {
    upstream = await startUpstream('backend');
    dir = makeTempDir();
    const faults = path.join(dir, 'faults.js');
    fs.writeFileSync(faults, FAULTS);
    const started = performance.now();
    proxy = await startProxy({ ...routedBootstrap(upstream.port), stats_flush_interval: '0.1s' }, [], 15_000, { NODE_OPTIONS: `--require ${faults}` });
    startMs = performance.now() - started;
  });

  after(async () => {
    await proxy?.cleanup();
    await upstream?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('server.memory_physical_size: the supervisor\'s resident memory', async () => {
    const value = await waitFor('a physical size', async () => (await proxy.stat('server.memory_physical_size')) || undefined);
    const rss = residentBytes(proxy.pid);
    assert.ok(value > rss / 2 && value < rss * 2, `${value} against VmRSS ${rss}`);
  });

  test('server.initialization_time_ms: one sample, from the start to serving', async () => {
    // The cumulative quantiles: the interval ones show the sample only until the next flush,
    // 100 ms here, which a poll on a loaded machine can miss for good.
    const text = await waitFor('the flushed histogram', async () => {
      const body = (await proxy.admin('/stats?filter=^server\\.initialization_time_ms$')).body;
      return /P0\([^,]+,\d/.test(body) ? body : undefined;
    });
    const p100 = Number(/P100\([^,]+,([\d.]+)\)/.exec(text)?.[1]);
    assert.ok(p100 > 0 && p100 < startMs, `${p100} ms, the test saw ${startMs} ms\n${text}`);
  });

  test('a worker\'s failed assertion counts in debug_assertion_failures, a throwing admin handler in proxy_bug_failures', async () => {
    assert.equal(await proxy.stat('server.debug_assertion_failures'), 0);
    assert.equal(await proxy.stat('server.proxy_bug_failures'), 0);
    // The worker dies of it and is restarted; /memory answers with the supervisor's figures.
    assert.equal((await proxy.admin('/memory')).status, 200);
    await waitFor('the assertion counted', async () => ((await proxy.stat('server.debug_assertion_failures')) === 1 ? true : undefined));
    await waitFor('the worker restarted', async () => ((await proxy.stat('server.worker_restarts')) === 1 ? true : undefined));
    const failed = await proxy.admin('/memory');
    assert.deepEqual([failed.status, failed.body], [500, 'injected admin failure\n']);
    assert.equal(await proxy.stat('server.proxy_bug_failures'), 1);
    assert.equal(await proxy.stat('server.debug_assertion_failures'), 1);
    assert.equal(proxy.stderr.match(/uncaught exception/g)?.length, 1, proxy.stderr);
  });

  test('/config_dump: the bootstrap node carries the user agent, its build version and the extensions', async () => {
    const dump = JSON.parse((await proxy.admin('/config_dump')).body) as { configs: { bootstrap?: { node: Record<string, unknown> } }[] };
    const node = dump.configs[0]!.bootstrap!.node;
    const info = JSON.parse((await proxy.admin('/server_info?format=json')).body) as { node: Record<string, unknown> };
    assert.equal(node.user_agent_name, 'proxy');
    const build = node.user_agent_build_version as { version: Record<string, number>; metadata: Record<string, string> };
    assert.deepEqual(Object.keys(build.version), ['major_number', 'minor_number', 'patch']);
    assert.deepEqual(Object.keys(build.metadata), ['build.type', 'ssl.version', 'revision.sha', 'revision.status']);
    assert.deepEqual(build, info.node.user_agent_build_version);
    const extensions = node.extensions as { name: string; category: string }[];
    assert.ok(extensions.some((e) => e.name === 'proxy.filters.http.router' && e.category === 'proxy.filters.http'), JSON.stringify(extensions));
    assert.deepEqual(extensions, info.node.extensions);
  });
});
