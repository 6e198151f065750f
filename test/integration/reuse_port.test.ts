// A listener's reuse_port: one SO_REUSEPORT socket per worker, seen from the kernel's side
// (/proc/net/tcp's listening sockets and the socket inodes each process holds). Each worker
// accepts on its own socket and the kernel spreads connections over them; a restarted worker
// gets its index's socket back; a hot restart hands each worker index's socket to the new epoch;
// LDS's listeners bind the same way, and an update that changes reuse_port is refused.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { type TestContext, test } from 'node:test';
import { freePort } from '../../bench/free_port';
import { HotRestarterRun } from '../helpers/hot_restart_run';
import { tcpUpstream } from '../helpers/http_peers';
import { makeTempDir, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const TCP_PROXY_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
const LISTENER_TYPE = 'type.googleapis.com/envoy.config.listener.v3.Listener';

function echoListener(name: string, port: number, reusePort: boolean) {
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: port } },
    reuse_port: reusePort,
    filter_chains: [{ filters: [{ name: 'proxy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: name, cluster: 'echo' } }] }],
  };
}

function echoCluster(port: number) {
  return {
    name: 'echo',
    connect_timeout: '1s',
    load_assignment: { cluster_name: 'echo', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] },
  };
}

const echoServer = (t: TestContext): Promise<number> => tcpUpstream(t, (socket) => socket.pipe(socket));

/** The inodes of the sockets listening on 127.0.0.1:`port`, from the kernel's table. */
function listeningInodes(port: number): Set<string> {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set<string>();
  for (const line of fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] === local && fields[3] === '0A') inodes.add(fields[9]!);
  }
  return inodes;
}

/** Of `among`, the socket inodes process `pid` holds. */
function heldOf(pid: number, among: Set<string>): string[] {
  const held = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      if (inode !== undefined && among.has(inode)) held.add(inode);
    } catch {
      // Closed since the directory was read.
    }
  }
  return [...held].sort();
}

/** One echo through the listener on its own connection. */
function echoOnce(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end('x'));
    let got = '';
    socket.on('data', (chunk) => (got += chunk.toString()));
    socket.on('end', () => (got === 'x' ? resolve() : reject(new Error(`echoed ${JSON.stringify(got)}`))));
    socket.on('error', reject);
  });
}

/** Each worker holds exactly one of the listener's sockets, every one a different one; returns them by worker pid. */
function socketPerWorker(workers: readonly number[], listening: Set<string>): Map<number, string> {
  const byWorker = new Map(workers.map((pid) => [pid, heldOf(pid, listening)]));
  for (const [pid, held] of byWorker) assert.equal(held.length, 1, `worker ${pid} holds ${held.join(', ')} of ${[...listening].join(', ')}`);
  const mine = new Map([...byWorker].map(([pid, held]) => [pid, held[0]!]));
  assert.equal(new Set(mine.values()).size, workers.length);
  return mine;
}

const workersOf = (proxy: RunningProxy) => proxy.groupPids().filter((pid) => pid !== proxy.pid);

test('reuse_port: a socket per worker, connections on both, a restarted worker gets its own back', { timeout: 60_000 }, async (t) => {
  const echo = await echoServer(t);
  const proxy = await startProxy(
    { static_resources: { listeners: [echoListener('spread', 0, true), echoListener('shared', 0, false)], clusters: [echoCluster(echo)] } },
    ['--concurrency', '2'],
  );
  t.after(() => proxy.cleanup());
  const port = await proxy.listenerPort('spread');
  const listening = listeningInodes(port);
  assert.equal(listening.size, 2);
  assert.deepEqual(heldOf(proxy.pid, listening), [...listening].sort());
  const workers = workersOf(proxy);
  assert.equal(workers.length, 2);
  const mine = socketPerWorker(workers, listening);
  // Without reuse_port the workers share one.
  const shared = listeningInodes(await proxy.listenerPort('shared'));
  assert.equal(shared.size, 1);
  for (const pid of workers) assert.deepEqual(heldOf(pid, shared), [...shared]);

  // The kernel hashes each connection's addresses over the two: 40 all on one is 2 in 2^40.
  for (let i = 0; i < 40; i++) await echoOnce(port);
  const stat = (name: string) => proxy.stat(`listener.127.0.0.1_${port}.${name}`);
  await waitFor('40 connections counted', async () => ((await stat('downstream_cx_total')) === 40 ? true : undefined));
  const perWorker = [await stat('worker_0.downstream_cx_total'), await stat('worker_1.downstream_cx_total')];
  assert.ok(perWorker.every((n) => n !== undefined && n > 0), `per worker: ${perWorker.join(', ')}`);

  // The supervisor keeps every socket: the replacement of a dead worker accepts on that worker's.
  const [victim, survivor] = workers as [number, number];
  process.kill(victim, 'SIGKILL');
  const replacement = await waitFor('the worker restarted', () => workersOf(proxy).find((pid) => pid !== survivor && pid !== victim));
  await waitFor('the replacement to hold its socket', () => (heldOf(replacement, listening).length === 1 ? true : undefined));
  assert.deepEqual(heldOf(replacement, listening), [mine.get(victim)]);
  assert.deepEqual(listeningInodes(port), listening);
  for (let i = 0; i < 8; i++) await echoOnce(port);
});

test("reuse_port across a hot restart: each worker index's socket passes to the new epoch", { timeout: 90_000 }, async (t) => {
  const echo = await echoServer(t);
  const port = await freePort();
  const run = HotRestarterRun.withBootstrap(
    {
      admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: { listeners: [echoListener('spread', port, true)], clusters: [echoCluster(echo)] },
    },
    ['--concurrency', '2', '--drain-time-s', '1', '--parent-shutdown-time-s', '2'],
  );
  t.after(() => run.cleanup());
  await run.adminOf(0);
  const listening = listeningInodes(port);
  assert.equal(listening.size, 2);
  const [epoch0] = run.supervisorPids();
  socketPerWorker(run.workerPids(epoch0!), listening);

  run.signal('SIGHUP');
  await run.adminOf(1);
  const epoch1 = run.supervisorPids().find((pid) => pid !== epoch0)!;
  // No socket was bound beside the old ones: the same two serve, now in the new epoch's workers.
  assert.deepEqual(listeningInodes(port), listening);
  socketPerWorker(run.workerPids(epoch1), listening);
  await echoOnce(port);
  await waitFor('epoch 0 gone', () => (run.supervisorPids().includes(epoch0!) ? undefined : true), 20_000);
  assert.deepEqual(listeningInodes(port), listening);
  for (let i = 0; i < 8; i++) await echoOnce(port);
});

test('an LDS listener with reuse_port binds a socket per worker; an update changing reuse_port is refused', { timeout: 60_000 }, async (t) => {
  const echo = await echoServer(t);
  const dir = makeTempDir();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const ldsPath = path.join(dir, 'lds.json');
  const publish = (version: string, reusePort: boolean) => {
    const resources = [{ '@type': LISTENER_TYPE, ...echoListener('dyn', 0, reusePort) }];
    fs.writeFileSync(`${ldsPath}.tmp`, JSON.stringify({ version_info: version, resources }));
    fs.renameSync(`${ldsPath}.tmp`, ldsPath);
  };
  publish('one', true);
  const proxy = await startProxy(
    {
      node: { id: 'reuse', cluster: 'reuse' },
      dynamic_resources: { lds_config: { path: ldsPath, resource_api_version: 'V3' } },
      static_resources: { clusters: [echoCluster(echo)] },
    },
    ['--concurrency', '2'],
  );
  t.after(() => proxy.cleanup());
  const port = await waitFor('the LDS listener', () => proxy.listenerPort('dyn').catch(() => undefined));
  const listening = listeningInodes(port);
  assert.equal(listening.size, 2);
  await waitFor('each worker to hold its socket', () => (workersOf(proxy).every((pid) => heldOf(pid, listening).length === 1) ? true : undefined));
  socketPerWorker(workersOf(proxy), listening);
  await echoOnce(port);

  publish('two', false);
  await waitFor('the update rejected', async () => ((await proxy.stat('listener_manager.lds.update_rejected')) === 1 ? true : undefined));
  const dump = JSON.parse((await proxy.admin('/config_dump?resource=dynamic_listeners')).body) as { configs: { name: string; error_state?: { details: string } }[] };
  assert.match(dump.configs.find((c) => c.name === 'dyn')?.error_state?.details ?? '', /has a different reuse_port \(false\) from existing listener/);
  assert.deepEqual(listeningInodes(port), listening);
  await echoOnce(port);
});
