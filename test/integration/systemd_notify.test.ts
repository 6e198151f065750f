// Readiness under systemd's Type=notify: the wrapper runs the proxy with NOTIFY_SOCKET naming a
// socket this test reads. Epoch 0 says READY=1 once it serves; a hot restart is RELOADING=1 then
// READY=1 from the new epoch once it serves; reload-proxy says RELOADING=1 before its SIGHUP;
// an epoch that leaves for the next says nothing; a stop says STOPPING=1; a failed start never
// says READY=1.

import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { servingBootstrap } from '../helpers/config_fixtures';
import { HotRestarterRun, uniqueBaseId, writeStartScript } from '../helpers/hot_restart_run';
import { startUpstream, type Upstream } from '../helpers/http_peers';
import { NotifyInbox } from '../helpers/notify_inbox';
import { listenerPort, livePidsWhere, makeTempDir, request, spawnProxy, waitFor } from '../helpers/proxy_process';
import { REPO_ROOT } from '../helpers/systemd_unit';

const RELOAD_SCRIPT = path.join(REPO_ROOT, 'scripts', 'reload-proxy');
const CONCURRENCY = 2;

function systemdNotifyMissing(): string | false {
  const probe = spawnSync('systemd-notify', ['--version'], { stdio: 'ignore' });
  return probe.error === undefined ? false : `systemd-notify is not installed (Debian's systemd package): ${probe.error.message}`;
}

describe('sd_notify from the proxy under the hot restart wrapper', { timeout: 120_000 }, () => {
  let upstream: Upstream | undefined;
  let inbox: NotifyInbox | undefined;
  let run: HotRestarterRun | undefined;
  let dir = '';
  let startScript = '';
  let newestEpoch = 0;

  function epochPid(epoch: number): number {
    const forked = [...run!.output.matchAll(/^forked new child process with PID=(\d+)$/gm)];
    return Number(forked[epoch]![1]);
  }

  /** The admin URL of `epoch`, which must already serve: no waiting. */
  async function servesNow(epoch: number): Promise<string> {
    const admin = `http://${fs.readFileSync(path.join(dir, `admin.${epoch}`), 'utf8')}`;
    assert.equal((await request(`${admin}/ready`)).status, 200);
    const proxied = await request(`http://127.0.0.1:${await listenerPort(admin, 'http_in')}/through`);
    assert.equal(proxied.status, 200);
    assert.equal(JSON.parse(proxied.body).upstream, 'web');
    return admin;
  }

  /** Epoch `epoch` exits 0 after --parent-shutdown-time-s, and has told systemd nothing. */
  async function leavesQuietly(epoch: number): Promise<void> {
    const line = `PID=${epochPid(epoch)} exited with code=0`;
    await waitFor(`epoch ${epoch} to exit`, () => (run!.output.includes(line) ? true : undefined));
    assert.equal(inbox!.take(), null);
  }

  async function startsAndServes(epoch: number): Promise<void> {
    const reloading = await inbox!.next();
    assert.match(reloading.MONOTONIC_USEC ?? '', /^\d+$/);
    assert.deepEqual({ ...reloading, MONOTONIC_USEC: 'n' }, { RELOADING: '1', MONOTONIC_USEC: 'n', STATUS: `epoch ${epoch}: hot restart, initializing` });
    assert.deepEqual(await inbox!.next(), { READY: '1', STATUS: `epoch ${epoch}: serving, concurrency ${CONCURRENCY}` });
    await servesNow(epoch);
    newestEpoch = epoch;
  }

  before(async () => {
    upstream = await startUpstream('web');
    dir = makeTempDir();
    inbox = new NotifyInbox(path.join(dir, 'notify.sock'));
    const configPath = path.join(dir, 'proxy.json');
    fs.writeFileSync(configPath, JSON.stringify(servingBootstrap({ upstreamPort: upstream.port, listenPort: 0, version: 'v1' })));
    const baseId = uniqueBaseId();
    startScript = writeStartScript(dir, configPath, baseId, [
      '--concurrency', String(CONCURRENCY), '--drain-time-s', '1', '--parent-shutdown-time-s', '1',
    ]);
    run = HotRestarterRun.start(dir, startScript, baseId, { NOTIFY_SOCKET: inbox.path });
  });

  after(async () => {
    inbox?.close();
    await run?.cleanup();
    await upstream?.close();
  });

  test('epoch 0 says READY=1 when it already serves; its workers do not get NOTIFY_SOCKET', async () => {
    assert.deepEqual(await inbox!.next(), { STATUS: 'epoch 0: initializing' });
    assert.deepEqual(await inbox!.next(), { READY: '1', STATUS: `epoch 0: serving, concurrency ${CONCURRENCY}` });
    await servesNow(0);

    const supervisor = epochPid(0);
    const environ = (pid: number) => fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    assert.ok(environ(supervisor).includes(`NOTIFY_SOCKET=${inbox!.path}`));
    const workers = livePidsWhere((stat) => stat.ppid === supervisor);
    assert.equal(workers.length, CONCURRENCY);
    for (const worker of workers) assert.ok(!environ(worker).some((v) => v.startsWith('NOTIFY_SOCKET=')), `worker ${worker} has NOTIFY_SOCKET`);
  });

  test('SIGHUP: the new epoch says RELOADING=1, then READY=1 when it serves; the old one leaves quietly', async () => {
    run!.signal('SIGHUP');
    await startsAndServes(1);
    await leavesQuietly(0);
  });

  test('reload-proxy says RELOADING=1 and waits until it was read before its SIGHUP', { skip: systemdNotifyMissing() }, async () => {
    const reload = new Promise<string>((resolve, reject) =>
      execFile(RELOAD_SCRIPT, [startScript, String(run!.child.pid)], { env: { ...process.env, NOTIFY_SOCKET: inbox!.path }, timeout: 30_000 }, (error, stdout, stderr) =>
        error === null ? resolve(stdout + stderr) : reject(new Error(`${error.message}\n${stdout}${stderr}`)),
      ),
    );
    assert.deepEqual(await inbox!.next(), { RELOADING: '1', STATUS: 'reload: configuration valid, starting the next epoch' });
    // Reading this message closes its descriptor: systemd's answer, and only then comes SIGHUP.
    assert.deepEqual(await inbox!.next(), { BARRIER: '1' });
    await startsAndServes(2);
    assert.match(await reload, /configuration '.*' OK/);
    await leavesQuietly(1);
  });

  test('SIGTERM to the wrapper: STOPPING=1 from the serving epoch', async () => {
    run!.signal('SIGTERM');
    assert.deepEqual(await inbox!.next(), { STOPPING: '1', STATUS: `epoch ${newestEpoch}: stopping (SIGTERM)` });
    assert.equal(await run!.exited, 0);
    assert.equal(inbox!.take(), null);
  });
});

test('a start that fails says why in STATUS=, and neither READY=1 nor STOPPING=1', { timeout: 30_000 }, async (t) => {
  const dir = makeTempDir();
  const inbox = new NotifyInbox(path.join(dir, 'notify.sock'));
  const configPath = path.join(dir, 'proxy.json');
  // The cluster is never reached: the start fails first, writing the admin address.
  fs.writeFileSync(configPath, JSON.stringify(servingBootstrap({ upstreamPort: 9, listenPort: 0, version: 'v1' })));
  const args = ['-c', configPath, '--disable-hot-restart', '--concurrency', '1', '--admin-address-path', path.join(dir, 'missing', 'address')];
  const proxy = spawnProxy(args, { dir, env: { NOTIFY_SOCKET: inbox.path } });
  t.after(async () => {
    inbox.close();
    await proxy.cleanup();
  });
  assert.deepEqual(await proxy.exited, { code: 1, signal: null });
  assert.deepEqual(inbox.take(), { STATUS: 'epoch 0: initializing' });
  assert.match(inbox.take()?.STATUS ?? '', /^epoch 0: failed to start: ENOENT: no such file or directory/);
  assert.equal(inbox.take(), null);
});
