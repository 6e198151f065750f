// Hot restart around the happy path: the shared region per base id, the sockets, the dynamic
// base id, --disable-hot-restart, and every failure the issue names.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { freePort } from '../../bench/free_port';
import * as addon from '../../src/native/addon';
import { StatsRegion } from '../../src/shared_memory/region';
import { posixSharedMemory } from '../../src/shared_memory/posix_shared_memory';
import { DIRECTORY_ENTRY_WORDS, DIRECTORY_OFFSET, DirectoryField, HeaderField, SectionKind } from '../../src/shared_memory/region_layout';
import { HotRestarterRun, uniqueBaseId, writeStartScript } from '../helpers/hot_restart_run';
import { makeTempDir, ProxyProcess, request, sleep, spawnProxy, waitFor } from '../helpers/proxy_process';

interface Epoch {
  readonly proc: ProxyProcess;
  readonly admin: string;
}

const started: ProxyProcess[] = [];
const regions = new Set<string>();
/** Each test's directory: its bootstrap, the epochs' admin address files, their run dirs. */
const dirs: string[] = [];

function testDir(): string {
  const dir = makeTempDir();
  dirs.push(dir);
  return dir;
}

function bootstrap(dir: string, upstreamPort: number, listenPort: number): string {
  const file = path.join(dir, 'bootstrap.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [{
          name: 'tcp_in',
          address: { socket_address: { address: '127.0.0.1', port_value: listenPort } },
          filter_chains: [{ filters: [{ name: 'proxy.filters.network.tcp_proxy', typed_config: {
            '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 'echo', cluster: 'echo',
          } }] }],
        }],
        clusters: [{ name: 'echo', load_assignment: { cluster_name: 'echo', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstreamPort } } } }] }] } }],
      },
    }),
  );
  return file;
}

function launch(dir: string, config: string, baseId: number, epoch: number, extra: readonly string[] = []): ProxyProcess {
  regions.add(`/proxy_shared_memory_${baseId * 10}`);
  const proc = spawnProxy(
    ['-c', config, '--base-id', String(baseId), '--restart-epoch', String(epoch), '--concurrency', '1',
      '--admin-address-path', path.join(dir, `admin.${epoch}`), '--drain-time-s', '1', '--parent-shutdown-time-s', '2', ...extra],
    { dir: fs.mkdtempSync(path.join(dir, 'run-')) },
  );
  started.push(proc);
  return proc;
}

async function serving(dir: string, proc: ProxyProcess, epoch: number): Promise<Epoch> {
  const file = path.join(dir, `admin.${epoch}`);
  const admin = await waitFor(`epoch ${epoch}`, async () => {
    if (proc.child.exitCode !== null) throw new Error(`epoch ${epoch} exited ${proc.child.exitCode}: ${proc.stderr}`);
    if (!fs.existsSync(file)) return undefined;
    const url = `http://${fs.readFileSync(file, 'utf8')}`;
    return (await request(`${url}/ready`)).status === 200 ? url : undefined;
  });
  return { proc, admin };
}

function echoThrough(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.end(text));
    let got = '';
    s.on('data', (d) => (got += d.toString()));
    s.on('end', () => resolve(got));
    s.on('error', reject);
  });
}

describe('hot restart: regions, sockets and failures', { timeout: 120_000 }, () => {
  const echo = net.createServer((s) => s.pipe(s));
  const ready = new Promise<number>((r) => echo.listen(0, '127.0.0.1', () => r((echo.address() as net.AddressInfo).port)));

  after(async () => {
    await Promise.all(started.map((p) => p.cleanup()));
    for (const name of regions) StatsRegion.unlinkStale(posixSharedMemory, name);
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    echo.close();
  });

  test('epoch 0 replaces a stale region; --hot-restart-version matches the endpoint', async () => {
    const dir = testDir();
    const baseId = uniqueBaseId();
    const name = `/proxy_shared_memory_${baseId * 10}`;
    addon.shmCreate(name, 4096);
    const port = await freePort();
    const e0 = await serving(dir, launch(dir, bootstrap(dir, await ready, port), baseId, 0), 0);
    assert.equal(await echoThrough(port, 'x'), 'x');
    const version = spawnProxy(['--hot-restart-version']);
    started.push(version);
    await version.exited;
    assert.equal((await request(`${e0.admin}/hot_restart_version`)).body, version.stderr);
    assert.match(version.stderr, /^\d+(\.[a-z]+:\d+)+$/);
  });

  test('a region of another layout: the new epoch refuses it and exits 1', async () => {
    const dir = testDir();
    const baseId = uniqueBaseId();
    const name = `/proxy_shared_memory_${baseId * 10}`;
    regions.add(name);
    // A region whose stats section an incompatible build wrote (another section version).
    const other = StatsRegion.create({ memory: posixSharedMemory, name, pid: process.pid }, baseId, Date.now());
    const entry = DIRECTORY_OFFSET + DIRECTORY_ENTRY_WORDS;
    other.section(SectionKind.Stats);
    assert.equal(other.header[entry + DirectoryField.Kind], SectionKind.Stats);
    other.header[entry + DirectoryField.Version] = 99;
    const proc = launch(dir, bootstrap(dir, await ready, await freePort()), baseId, 1);
    assert.equal((await proc.exited).code, 1);
    assert.match(proc.stderr, /not hot-restart compatible/);
  });

  test('a second epoch 0 with the same base id fails clearly and leaves the first serving', async () => {
    const dir = testDir();
    const baseId = uniqueBaseId();
    const port = await freePort();
    const config = bootstrap(dir, await ready, port);
    const e0 = await serving(dir, launch(dir, config, baseId, 0), 0);
    assert.equal(await echoThrough(port, 'one'), 'one');
    const again = launch(dir, config, baseId, 0, ['--admin-address-path', path.join(dir, 'admin.again')]);
    assert.equal((await again.exited).code, 1);
    assert.match(again.stderr, new RegExp(`unable to bind domain socket with base_id=${baseId * 10}, id=0, errno=98 \\(see --base-id option\\)`));
    assert.equal(await echoThrough(port, 'two'), 'two');
    const stats = (await request(`${e0.admin}/stats?filter=^tcp\\.echo\\.downstream_cx_total$`)).body;
    assert.equal(stats, 'tcp.echo.downstream_cx_total: 2\n');
  });

  test('a new epoch with an invalid config exits 1 and the old one serves on', async () => {
    const dir = testDir();
    const baseId = uniqueBaseId();
    const port = await freePort();
    const e0 = await serving(dir, launch(dir, bootstrap(dir, await ready, port), baseId, 0), 0);
    const bad = path.join(dir, 'bad.yaml');
    fs.writeFileSync(bad, 'static_resources: { clusters: [ { name: x, type: NOPE } ] }\n');
    const e1 = launch(dir, bad, baseId, 1);
    assert.equal((await e1.exited).code, 1);
    assert.equal((await request(`${e0.admin}/ready`)).status, 200);
    assert.equal(await echoThrough(port, 'still'), 'still');
  });

  test('a new epoch whose route table a worker could not build exits 1 before it starts, and the old one serves on', async () => {
    const dir = testDir();
    const baseId = uniqueBaseId();
    const port = await freePort();
    const config = bootstrap(dir, await ready, port);
    const e0 = await serving(dir, launch(dir, config, baseId, 0), 0);
    const withHttp = JSON.parse(fs.readFileSync(config, 'utf8'));
    const host = (name: string, domain: string) => ({ name, domains: [domain], routes: [{ match: { prefix: '/' }, route: { cluster: 'echo' } }] });
    withHttp.static_resources.listeners.push({
      name: 'http_in',
      address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
      filter_chains: [{ filters: [{ name: 'proxy.filters.network.http_connection_manager', typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
        stat_prefix: 'in',
        route_config: { name: 'routes', virtual_hosts: [host('a', 'example.com'), host('b', 'example.com')] },
        http_filters: [{ name: 'proxy.filters.http.router' }],
      } }] }],
    });
    const duplicateDomains = path.join(dir, 'duplicate_domains.json');
    fs.writeFileSync(duplicateDomains, JSON.stringify(withHttp));
    const e1 = launch(dir, duplicateDomains, baseId, 1);
    assert.equal((await e1.exited).code, 1);
    assert.ok(
      e1.stderr.includes(
        `${duplicateDomains}: static_resources.listeners[1].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[1].domains[0]: ` +
          'Only unique values for domains are permitted. Duplicate entry of domain example.com in route routes',
      ),
      e1.stderr,
    );
    // Refused before it joined the region or asked epoch 0 for anything: no new generation.
    assert.doesNotMatch(e1.stderr, /initializing epoch/);
    const stats = (await request(`${e0.admin}/stats?filter=^server\\.(hot_restart_generation|live)$`)).body;
    assert.equal(stats, 'server.hot_restart_generation: 1\nserver.live: 1\n');
    assert.equal((await request(`${e0.admin}/ready`)).status, 200);
    assert.equal(await echoThrough(port, 'still'), 'still');
  });

  test('an epoch that fails late leaves the stats to its parent; a retry counts on from it', async () => {
    const dir = testDir();
    const baseId = uniqueBaseId();
    const port = await freePort();
    const config = bootstrap(dir, await ready, port);
    await serving(dir, launch(dir, config, baseId, 0), 0);
    // Epoch 1 also wants a port another program holds: it fails after taking the epoch over.
    const squatter = net.createServer();
    const taken = await new Promise<number>((r) => squatter.listen(0, '127.0.0.1', () => r((squatter.address() as net.AddressInfo).port)));
    const withExtra = JSON.parse(fs.readFileSync(config, 'utf8'));
    withExtra.static_resources.listeners.push({ ...withExtra.static_resources.listeners[0], name: 'extra', address: { socket_address: { address: '127.0.0.1', port_value: taken } } });
    const extraConfig = path.join(dir, 'extra.json');
    fs.writeFileSync(extraConfig, JSON.stringify(withExtra));
    try {
      const failed = launch(dir, extraConfig, baseId, 1);
      assert.equal((await failed.exited).code, 1);
      assert.match(failed.stderr, /EADDRINUSE/);
    } finally {
      squatter.close();
    }
    assert.equal(await echoThrough(port, 'parent'), 'parent');
    const retry = await serving(dir, launch(dir, config, baseId, 1), 1);
    const stats = (await request(`${retry.admin}/stats?filter=^server\\.(hot_restart_generation|live)$`)).body;
    assert.equal(stats, 'server.hot_restart_generation: 2\nserver.live: 1\n');
  });

  test('a restart while the previous one is initializing fails fast', async () => {
    const dir = testDir();
    const baseId = uniqueBaseId();
    const port = await freePort();
    const config = bootstrap(dir, await ready, port);
    await serving(dir, launch(dir, config, baseId, 0), 0);
    const e1 = launch(dir, config, baseId, 1, ['--concurrency', '2']);
    // Freeze epoch 1 in the middle of its initialization.
    const header = new Int32Array(addon.shmOpen(`/proxy_shared_memory_${baseId * 10}`), 0, 16);
    await waitFor('epoch 1 to hold the initializing mark', async () => {
      process.kill(e1.pid, 'SIGSTOP');
      if (Atomics.load(header, HeaderField.InitializingPid) === e1.pid) return true;
      process.kill(e1.pid, 'SIGCONT');
      await sleep(2);
      return undefined;
    });
    try {
      const e2 = launch(dir, config, baseId, 2);
      assert.equal((await e2.exited).code, 1);
      assert.match(e2.stderr, new RegExp(`previous proxy process is still initializing \\(pid ${e1.pid}\\)`));
    } finally {
      process.kill(e1.pid, 'SIGCONT');
    }
    await serving(dir, e1, 1);
    assert.equal(await echoThrough(port, 'after'), 'after');
  });

  test('the parent crashing before the handover leaves the new epoch serving', async () => {
    const dir = testDir();
    const baseId = uniqueBaseId();
    const port = await freePort();
    const config = bootstrap(dir, await ready, port);
    const e0 = await serving(dir, launch(dir, config, baseId, 0), 0);
    assert.equal(await echoThrough(port, 'before'), 'before');
    process.kill(e0.proc.pid, 'SIGKILL');
    const e1 = await serving(dir, launch(dir, config, baseId, 1), 1);
    assert.equal(await echoThrough(port, 'survived'), 'survived');
    assert.match(e1.proc.stderr, /the parent epoch did not answer shutdown_admin .*; continuing without it/);
    // The crashed epoch's stats columns are reclaimed, its counters kept.
    await waitFor('stats of both epochs', async () => {
      const body = (await request(`${e1.admin}/stats?filter=^tcp\\.echo\\.downstream_cx_total$`)).body;
      return body === 'tcp.echo.downstream_cx_total: 2\n' ? true : undefined;
    });
  });

  test('filesystem sockets: a stale file is replaced and --socket-mode applies', async () => {
    const dir = testDir();
    const baseId = uniqueBaseId();
    const socketPath = path.join(dir, 'hr');
    const scaled = baseId * 10;
    fs.writeFileSync(`${socketPath}_parent_${scaled}`, 'stale');
    fs.writeFileSync(`${socketPath}_child_${scaled}`, 'stale');
    const port = await freePort();
    await serving(dir, launch(dir, bootstrap(dir, await ready, port), baseId, 0, ['--socket-path', socketPath, '--socket-mode', '644']), 0);
    for (const role of ['parent', 'child']) {
      const st = fs.statSync(`${socketPath}_${role}_${scaled}`);
      assert.ok(st.isSocket());
      assert.equal(st.mode & 0o777, 0o644);
    }
  });

  test('--use-dynamic-base-id writes the id that the next epoch passes with --base-id', async () => {
    const dir = testDir();
    const port = await freePort();
    const config = bootstrap(dir, await ready, port);
    const idFile = path.join(dir, 'base_id');
    const e0 = launch(dir, config, 0, 0, ['--use-dynamic-base-id', '--base-id-path', idFile]);
    await serving(dir, e0, 0);
    const id = Number(fs.readFileSync(idFile, 'utf8'));
    regions.add(`/proxy_shared_memory_${id * 10}`);
    assert.ok(Number.isInteger(id) && id >= 0 && id <= 0x0fffffff);
    assert.ok(fs.existsSync(`/dev/shm/proxy_shared_memory_${id * 10}`));
    const e1 = await serving(dir, launch(dir, config, id, 1), 1);
    assert.equal((await request(`${e1.admin}/server_info`)).body.trim().split(' ')[5], '1');
    await waitFor('epoch 0 to drain and exit', async () => ((await e0.exited).code === 0 ? true : undefined));
    assert.equal(await echoThrough(port, 'dyn'), 'dyn');
  });

  test('the proxy stops when the hot-restarter that started it is killed', async () => {
    const dir = testDir();
    const baseId = uniqueBaseId();
    const script = writeStartScript(dir, bootstrap(dir, await ready, await freePort()), baseId, ['--concurrency', '1']);
    const run = HotRestarterRun.start(dir, script, baseId);
    try {
      await run.adminOf(0);
      const proxyPid = Number(/forked new child process with PID=(\d+)/.exec(run.output)![1]);
      run.child.kill('SIGKILL');
      await waitFor('the orphaned proxy to stop', () => (fs.existsSync(`/proc/${proxyPid}`) ? undefined : true));
      assert.match(run.log(0), /caught SIGTERM/);
    } finally {
      await run.cleanup();
    }
  });

  test('--disable-hot-restart: no shared region, no domain socket, version disabled', async () => {
    const dir = testDir();
    const baseId = uniqueBaseId();
    const e = await serving(dir, launch(dir, bootstrap(dir, await ready, await freePort()), baseId, 0, ['--disable-hot-restart']), 0);
    assert.equal((await request(`${e.admin}/hot_restart_version`)).body, 'disabled');
    assert.ok(!fs.existsSync(`/dev/shm/proxy_shared_memory_${baseId * 10}`));
    const sockets = fs.readFileSync('/proc/net/unix', 'utf8');
    assert.ok(!sockets.includes(`proxy_domain_socket_child_${baseId * 10}`));
  });
});
