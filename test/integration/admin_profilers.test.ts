import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makeTempDir, request, RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { startUpstream, Upstream } from '../helpers/http_peers';
import { routedBootstrap } from '../helpers/routed_bootstrap';

function admin(dir: string, profilePath: string) {
  return {
    access_log_path: path.join(dir, 'admin_access.log'),
    profile_path: profilePath,
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
  };
}

function assertProfile(file: string): void {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as { nodes: unknown[]; samples: unknown[] };
  assert.ok(Array.isArray(profile.nodes) && profile.nodes.length > 0, file);
  assert.ok(Array.isArray(profile.samples), file);
}

describe('POST /cpuprofiler and /heapprofiler', { timeout: 90_000 }, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  let dir: string;
  let profilePath: string;

  before(async () => {
    upstream = await startUpstream('backend');
    dir = makeTempDir();
    profilePath = path.join(dir, 'proxy.prof');
    proxy = await startProxy(routedBootstrap(upstream.port, admin(dir, profilePath)), ['--concurrency', '2']);
  });

  after(async () => {
    await proxy?.cleanup();
    await upstream?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('parameters other than exactly enable=y|n answer 400', async () => {
    for (const query of ['', '?enable=yes', '?enable', '?enable=y&x=1', '?x=y']) {
      const r = await proxy.admin(`/cpuprofiler${query}`, 'POST');
      assert.equal(r.status, 400, query);
      assert.equal(r.body, '?enable=<y|n>\n', query);
    }
  });

  test('disabling a profiler that is not running is OK', async () => {
    const r = await proxy.admin('/cpuprofiler?enable=n', 'POST');
    assert.deepEqual([r.status, r.body], [200, 'OK\n']);
  });

  test('profiles the supervisor and each worker into its own file', async () => {
    let r = await proxy.admin('/cpuprofiler?enable=y', 'POST');
    assert.deepEqual([r.status, r.body], [200, 'OK\n']);
    r = await proxy.admin('/cpuprofiler?enable=y', 'POST');
    assert.equal(r.status, 400);
    assert.equal(r.body, 'the CPU profiler is already enabled\n');
    const port = await proxy.listenerPort('http_in');
    for (let i = 0; i < 50; i++) assert.equal((await request(`http://127.0.0.1:${port}/p${i}`)).status, 200);
    r = await proxy.admin('/cpuprofiler?enable=n', 'POST');
    const files = [`${profilePath}.supervisor.cpuprofile`, `${profilePath}.worker-0.cpuprofile`, `${profilePath}.worker-1.cpuprofile`];
    assert.deepEqual([r.status, r.body], [200, `${files.join('\n')}\nOK\n`]);
    for (const file of files) assertProfile(file);
    // Enabled again after a disable, it profiles anew.
    assert.equal((await proxy.admin('/cpuprofiler?enable=y', 'POST')).status, 200);
    assert.equal((await proxy.admin('/cpuprofiler?enable=n', 'POST')).status, 200);
  });

  test('/heapprofiler, Envoy\'s answers: usage, not started, already started', async () => {
    for (const query of ['', '?enable=yes', '?enable=y&x=1']) {
      assert.deepEqual(await proxy.admin(`/heapprofiler${query}`, 'POST').then((r) => [r.status, r.body]), [400, '?enable=<y|n>\n'], query);
    }
    assert.deepEqual(await proxy.admin('/heapprofiler?enable=n', 'POST').then((r) => [r.status, r.body]), [400, 'Fail to stop heap profiler: not started']);
    assert.deepEqual(await proxy.admin('/heapprofiler?enable=y', 'POST').then((r) => [r.status, r.body]), [200, 'Starting heap profiler']);
    assert.deepEqual(await proxy.admin('/heapprofiler?enable=y', 'POST').then((r) => [r.status, r.body]), [400, 'Fail to start heap profiler: already started']);
    assert.equal((await proxy.admin('/heapprofiler?enable=n', 'POST')).status, 200);
  });

  test('/heapprofiler: a heap profile of the supervisor and each worker, each in its own file, while the CPU profiler runs too', async () => {
    assert.equal((await proxy.admin('/heapprofiler?enable=y', 'POST')).status, 200);
    assert.equal((await proxy.admin('/cpuprofiler?enable=y', 'POST')).status, 200);
    const port = await proxy.listenerPort('http_in');
    for (let i = 0; i < 50; i++) assert.equal((await request(`http://127.0.0.1:${port}/p${i}`)).status, 200);
    const r = await proxy.admin('/heapprofiler?enable=n', 'POST');
    const files = ['supervisor', 'worker-0', 'worker-1'].map((owner) => `${profilePath}.${owner}.heapprofile`);
    assert.deepEqual([r.status, r.body], [200, `Heap profiler stopped and data written to ${files.join(', ')}.`]);
    for (const file of files) {
      // V8's sampling heap profile: the tree of the sampled allocations still live, and the samples.
      const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as { head: { callFrame: { functionName: string }; children: unknown[] }; samples: unknown[] };
      assert.equal(profile.head.callFrame.functionName, '(root)', file);
      assert.ok(Array.isArray(profile.head.children) && Array.isArray(profile.samples), file);
    }
    // The CPU profiler was left running: its own disable writes its own files.
    const cpu = await proxy.admin('/cpuprofiler?enable=n', 'POST');
    assert.equal(cpu.status, 200);
    assert.match(cpu.body, /worker-1\.cpuprofile\nOK\n$/);
  });
  test('a worker that dies while profiling does not hold up the disable', async () => {
    assert.equal((await proxy.admin('/cpuprofiler?enable=y', 'POST')).status, 200);
    const workers = proxy.groupPids().filter((pid) => pid !== proxy.pid);
    assert.equal(workers.length, 2);
    for (const pid of workers) process.kill(pid, 'SIGKILL');
    const started = Date.now();
    const r = await proxy.admin('/cpuprofiler?enable=n', 'POST');
    assert.ok(Date.now() - started < 12_000);
    // The supervisor's profile is written; each worker is reported as gone or restarted since.
    assert.equal(r.status, 500);
    assert.match(r.body, new RegExp(`^${profilePath}\\.supervisor\\.cpuprofile\\nfailure to write the profile: worker 0: .*; worker 1: .*\\n$`));
    assertProfile(`${profilePath}.supervisor.cpuprofile`);
    await waitFor('the workers to be replaced', async () => ((await proxy.admin('/ready')).status === 200 && proxy.groupPids().length === 3 ? true : undefined));
    assert.deepEqual((await proxy.admin('/cpuprofiler?enable=n', 'POST')).body, 'OK\n');
  });
});

describe('POST /cpuprofiler with a profile_path that cannot be written', { timeout: 60_000 }, () => {
  test('answers 500 with the reason, profiles nothing, and the proxy serves on', async () => {
    const dir = makeTempDir();
    const profilePath = path.join(dir, 'missing', 'proxy.prof');
    const proxy = await startProxy(routedBootstrap(9, admin(dir, profilePath)), ['--concurrency', '2']);
    try {
      const r = await proxy.admin('/cpuprofiler?enable=y', 'POST');
      assert.equal(r.status, 500);
      assert.equal(
        r.body,
        `failure to start the profiler: supervisor: ENOENT: no such file or directory, open '${profilePath}.supervisor.cpuprofile'\n`,
      );
      assert.deepEqual((await proxy.admin('/cpuprofiler?enable=n', 'POST')).body, 'OK\n');
      assert.equal((await proxy.admin('/ready')).status, 200);
      // A directory made meanwhile is used by the next enable.
      fs.mkdirSync(path.dirname(profilePath));
      assert.equal((await proxy.admin('/cpuprofiler?enable=y', 'POST')).status, 200);
      assert.equal((await proxy.admin('/cpuprofiler?enable=n', 'POST')).status, 200);
      assertProfile(`${profilePath}.worker-1.cpuprofile`);
    } finally {
      await proxy.cleanup();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
