// A listener's connection_balance_config.exact_balance at --concurrency 2: whichever worker
// accepts a connection, it ends up with the worker holding fewer of the listener's, counted by
// the workers' per-handler downstream_cx_active. Without it, 20 connections one after another
// on a shared socket may all go to one worker (the kernel wakes whichever waits); with it they
// split 10 and 10, on a shared socket and with reuse_port alike, and the connections passed
// between the workers carry traffic. A replaced worker starts from no connections, so the next
// ones go to it; a hot restart's new epoch balances among its own workers.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { type TestContext, test } from 'node:test';
import { freePort } from '../../bench/free_port';
import { type Json, localCluster, tcpProxyListener } from '../helpers/config_fixtures';
import { tcpUpstream } from '../helpers/http_peers';
import { HotRestarterRun, statsOf } from '../helpers/hot_restart_run';
import { type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

/** A tcp_proxy listener to the echo cluster whose workers balance their connections exactly. */
function echoListener(name: string, reusePort: boolean, port = 0): Json {
  return { ...tcpProxyListener(name, port, 'echo'), reuse_port: reusePort, connection_balance_config: { exact_balance: {} } };
}

/** Reads a stat of the proxy; undefined when it has none of that name. */
type StatReader = (name: string) => Promise<number | undefined>;

const echoServer = (t: TestContext): Promise<number> => tcpUpstream(t, (socket) => socket.pipe(socket));

async function startBalanced(t: TestContext): Promise<RunningProxy> {
  const echo = await echoServer(t);
  const proxy = await startProxy(
    { static_resources: { listeners: [echoListener('shared', false), echoListener('spread', true)], clusters: [localCluster('echo', echo)] } },
    ['--concurrency', '2'],
  );
  t.after(() => proxy.cleanup());
  return proxy;
}

/** An open connection through the listener, which has echoed once (so a worker has taken it). */
class EchoConnection {
  private received = '';
  private waiting: (() => void) | null = null;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received += chunk.toString();
      this.waiting?.();
    });
  }

  static async open(port: number): Promise<EchoConnection> {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const connection = new EchoConnection(socket);
    await connection.echo('hello');
    return connection;
  }

  async echo(text: string): Promise<void> {
    this.received = '';
    this.socket.write(text);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no echo of ${text} in 5 s (got ${JSON.stringify(this.received)})`)), 5000);
      this.waiting = () => {
        if (this.received.length < text.length) return;
        clearTimeout(timer);
        this.waiting = null;
        assert.equal(this.received, text);
        resolve();
      };
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Each worker's open connections of the listener on `port`, waited for until they add up to `total`. */
async function activeByWorker(stat: StatReader, port: number, total: number): Promise<[number, number]> {
  return waitFor(`${total} connections open on ${port}`, async () => {
    const counts = await Promise.all([0, 1].map(async (worker) => (await stat(`listener.127.0.0.1_${port}.worker_${worker}.downstream_cx_active`)) ?? 0));
    const [first, second] = counts as [number, number];
    return first + second === total ? ([first, second] as [number, number]) : undefined;
  });
}

function statOf(proxy: RunningProxy): StatReader {
  return (name) => proxy.stat(name);
}

/**
 * Opens `count` more connections one after another, each taken by a worker before the next is
 * made, and checks that each went to the worker that held fewer (when they held as many,
 * either). By chance alone, 20 in a row from even would be 1 in about 1,000. `others`: open
 * connections of the listener not in `into`.
 */
async function openBalanced(stat: StatReader, port: number, count: number, into: EchoConnection[], others = 0): Promise<void> {
  let before = await activeByWorker(stat, port, others + into.length);
  for (let i = 0; i < count; i++) {
    into.push(await EchoConnection.open(port));
    const after = await activeByWorker(stat, port, others + into.length);
    const fewer = before[0] === before[1] ? (after[0] > before[0] ? 0 : 1) : before[0] < before[1] ? 0 : 1;
    assert.deepEqual(after, before.map((n, worker) => (worker === fewer ? n + 1 : n)), `connection ${into.length}: ${before.join(' and ')} before`);
    before = after;
  }
}

for (const [listener, how] of [
  ['shared', 'a socket the workers share'],
  ['spread', 'reuse_port'],
] as const) {
  test(`exact_balance with ${how}: 20 connections one after another split 10 and 10, and all of them carry traffic`, { timeout: 60_000 }, async (t) => {
    const proxy = await startBalanced(t);
    const port = await proxy.listenerPort(listener);
    const connections: EchoConnection[] = [];
    t.after(() => connections.forEach((c) => c.close()));
    await openBalanced(statOf(proxy), port, 20, connections);
    assert.deepEqual(await activeByWorker(statOf(proxy), port, 20), [10, 10]);
    for (const [i, connection] of connections.entries()) await connection.echo(`again ${i}`);

    // Those that close are counted out: the next ones fill up the worker that lost them.
    const [worker0Before] = await activeByWorker(statOf(proxy), port, 20);
    for (const connection of connections.splice(0, 6)) connection.close();
    const afterClose = await activeByWorker(statOf(proxy), port, 14);
    assert.equal(afterClose[0]! + afterClose[1]!, 14);
    await openBalanced(statOf(proxy), port, 6, connections);
    assert.deepEqual(await activeByWorker(statOf(proxy), port, 20), [10, 10], `worker 0 had ${worker0Before}, then ${afterClose.join(' and ')}`);
  });
}

/** Whether the abstract Unix socket `name` (with its '@') is bound, from the kernel's table. */
function abstractSocketBound(name: string): boolean {
  return fs
    .readFileSync('/proc/net/unix', 'utf8')
    .split('\n')
    .some((line) => line.endsWith(` ${name}`));
}

test('exact_balance: a replaced worker starts from no connections and takes the next ones', { timeout: 60_000 }, async (t) => {
  const proxy = await startBalanced(t);
  const port = await proxy.listenerPort('shared');
  const connections: EchoConnection[] = [];
  t.after(() => connections.forEach((c) => c.close()));
  await openBalanced(statOf(proxy), port, 8, connections);
  assert.deepEqual(await activeByWorker(statOf(proxy), port, 8), [4, 4]);

  const workers = proxy.groupPids().filter((pid) => pid !== proxy.pid);
  assert.equal(workers.length, 2);
  process.kill(workers[0]!, 'SIGKILL');
  const inboxes = [0, 1].map((worker) => `@proxy_exact_balance_${proxy.pid}_${worker}_127.0.0.1_${port}`);
  await waitFor('the replacement to balance', () => {
    // The killed worker's inbox closed as it died, before the supervisor could replace it.
    const replaced = proxy.groupPids().some((pid) => pid !== proxy.pid && !workers.includes(pid));
    return replaced && inboxes.every(abstractSocketBound) ? true : undefined;
  });
  // The killed worker's four went with it; the other keeps its own.
  const survived = await activeByWorker(statOf(proxy), port, 4);
  assert.deepEqual([...survived].sort(), [0, 4]);
  const fresh: EchoConnection[] = [];
  t.after(() => fresh.forEach((c) => c.close()));
  await openBalanced(statOf(proxy), port, 6, fresh, 4);
  assert.deepEqual(await activeByWorker(statOf(proxy), port, 10), [5, 5]);
  for (const [i, connection] of fresh.entries()) await connection.echo(`fresh ${i}`);
});

test('exact_balance across a hot restart: the new epoch balances among its own workers', { timeout: 90_000 }, async (t) => {
  const echo = await echoServer(t);
  const port = await freePort();
  const run = HotRestarterRun.withBootstrap(
    {
      admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: { listeners: [echoListener('shared', false, port)], clusters: [localCluster('echo', echo)] },
    },
    ['--concurrency', '2', '--drain-time-s', '1', '--parent-shutdown-time-s', '2'],
  );
  t.after(() => run.cleanup());
  const statAt = (admin: string): StatReader => async (name) => (await statsOf(admin)).get(name);
  const before: EchoConnection[] = [];
  t.after(() => before.forEach((c) => c.close()));
  await openBalanced(statAt(await run.adminOf(0)), port, 4, before);
  const [epoch0] = run.supervisorPids();

  run.signal('SIGHUP');
  const admin = await run.adminOf(1);
  // The new epoch's inboxes are its own: bound beside the old epoch's, under its supervisor's pid.
  const epoch1 = run.supervisorPids().find((pid) => pid !== epoch0)!;
  assert.ok([0, 1].every((worker) => abstractSocketBound(`@proxy_exact_balance_${epoch1}_${worker}_127.0.0.1_${port}`)));
  // Once the old epoch has gone, with its connections, only the new epoch's are counted.
  await waitFor('epoch 0 gone', () => (run.supervisorPids().includes(epoch0!) ? undefined : true), 20_000);
  before.forEach((c) => c.close());
  const after: EchoConnection[] = [];
  t.after(() => after.forEach((c) => c.close()));
  await openBalanced(statAt(admin), port, 10, after);
  assert.deepEqual(await activeByWorker(statAt(admin), port, 10), [5, 5]);
  for (const [i, connection] of after.entries()) await connection.echo(`after ${i}`);
});
