// The addon's relay between two sockets, over real TCP connections on 127.0.0.1: the bytes both
// ways and their statistics, a flow held back by its limit, the end of a stream and a reset
// stopping it, the unsent bytes handed back, and the sockets it refuses.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import * as net from 'node:net';
import { type TestContext, test } from 'node:test';
import { type RelayFlow, RelaySide, SocketRelay } from '../../src/network/socket_relay';
import type { Scope } from '../../src/stats/stats';
import { createHeapStatsStore } from '../../src/stats/store';

const TIMEOUT = { timeout: 20_000 };

/** A proxy's side of a connection: Node reads it through `onread`, as the listener's and the pools' sockets. */
async function proxySocket(port: number): Promise<net.Socket> {
  const buffer = Buffer.allocUnsafe(64 * 1024);
  const socket: net.Socket = net.connect({
    port,
    host: '127.0.0.1',
    onread: {
      buffer,
      callback: (length: number) => {
        socket.emit('data', Buffer.from(buffer.subarray(0, length)));
        return true;
      },
    },
  });
  await once(socket, 'connect');
  return socket;
}

interface Connections {
  /** The client, whose peer is the proxy's downstream socket. */
  client: net.Socket;
  downstream: net.Socket;
  upstream: net.Socket;
  /** The upstream server's side of the upstream connection. */
  server: net.Socket;
}

/** A downstream and an upstream connection, each with its peer. */
async function connections(t: TestContext): Promise<Connections> {
  const accepted: net.Socket[] = [];
  const listener = net.createServer((socket) => accepted.push(socket));
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const port = (listener.address() as net.AddressInfo).port;
  const downstream = await proxySocket(port);
  const upstream = await proxySocket(port);
  while (accepted.length < 2) await new Promise((resolve) => setImmediate(resolve));
  const [client, server] = accepted as [net.Socket, net.Socket];
  t.after(() => {
    for (const socket of [client, server, downstream, upstream]) socket.destroy();
    listener.close();
  });
  return { client, downstream, upstream, server };
}

function flows(scope: Scope, limits: readonly [number, number] = [0, 0]): [RelayFlow, RelayFlow] {
  const flow = (name: string, limit: number): RelayFlow => ({
    limit,
    rx: scope.counter(`${name}.rx`),
    tx: scope.counter(`${name}.tx`),
    buffered: scope.gauge(`${name}.buffered`),
    paused: scope.counter(`${name}.paused`),
    resumed: scope.counter(`${name}.resumed`),
  });
  return [flow('from_downstream', limits[0]), flow('from_upstream', limits[1])];
}

/** Reads `socket` until `bytes` bytes came: their SHA-1. */
async function receive(socket: net.Socket, bytes: number): Promise<string> {
  const hash = createHash('sha1');
  let seen = 0;
  for await (const chunk of socket as AsyncIterable<Buffer>) {
    hash.update(chunk.subarray(0, bytes - seen));
    seen += chunk.length;
    if (seen >= bytes) break;
  }
  return hash.digest('hex');
}

function sha1(data: Buffer): string {
  return createHash('sha1').update(data).digest('hex');
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A relay between fresh connections that must not stop, with its two flows' stats. */
async function runningRelay(t: TestContext, limits: readonly [number, number] = [0, 0]): Promise<Connections & { relay: SocketRelay; down: RelayFlow; up: RelayFlow }> {
  const connected = await connections(t);
  const [down, up] = flows(createHeapStatsStore().scope('relay'), limits);
  const relay = SocketRelay.start(connected.downstream, connected.upstream, [down, up], () => assert.fail('stopped'));
  assert.ok(relay !== null);
  t.after(() => relay.close());
  return { ...connected, relay, down, up };
}

/** A relay between fresh connections, and what stopped it (null while it runs). */
async function watchedRelay(t: TestContext): Promise<Connections & { relay: SocketRelay; stopped: () => [RelaySide, number] | null }> {
  const connected = await connections(t);
  let stopped: [RelaySide, number] | null = null;
  const relay = SocketRelay.start(connected.downstream, connected.upstream, flows(createHeapStatsStore().scope('relay')), (side, errno) => (stopped = [side, errno]));
  assert.ok(relay !== null);
  t.after(() => relay.close());
  return { ...connected, relay, stopped: () => stopped };
}

test('bytes go both ways, each counted read, written and never waiting, with the time they moved', TIMEOUT, async (t) => {
  const { client, server, relay, down, up } = await runningRelay(t);
  const before = Date.now();
  client.write('hello');
  assert.equal((await once(server, 'data'))[0].toString(), 'hello');
  server.write('world!');
  assert.equal((await once(client, 'data'))[0].toString(), 'world!');
  assert.deepEqual([down.rx.value(), down.tx.value(), down.buffered.value()], [5, 5, 0]);
  assert.deepEqual([up.rx.value(), up.tx.value(), up.buffered.value()], [6, 6, 0]);
  assert.deepEqual([relay.bytesRead(RelaySide.Downstream), relay.bytesRead(RelaySide.Upstream)], [5, 6]);
  assert.ok(relay.lastActivity >= before && relay.lastActivity <= Date.now(), `${relay.lastActivity}`);
});

test('beyond its limit a flow stops reading its source until the bytes drain to half of it', TIMEOUT, async (t) => {
  const { client, server, down } = await runningRelay(t, [256 * 1024, 0]);
  server.pause();
  const data = Buffer.alloc(16 * 1024 * 1024, 'abcdefgh');
  client.write(data);
  await until(() => down.paused.value() === 1, 'the flow to be paused');
  assert.ok(down.buffered.value() > 256 * 1024, `${down.buffered.value()} bytes waiting`);
  // Held back: the client's bytes stay in the kernel and in its own buffer, not in the relay.
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(down.paused.value(), 1);
  assert.ok(down.buffered.value() < 256 * 1024 + 64 * 1024, `${down.buffered.value()} bytes waiting`);
  assert.ok(client.writableLength > 0, 'the client could still write everything');
  const received = receive(server, data.length);
  server.resume();
  assert.equal(await received, sha1(data));
  assert.ok(down.paused.value() >= 1);
  assert.equal(down.resumed.value(), down.paused.value());
  assert.deepEqual([down.rx.value(), down.tx.value(), down.buffered.value()], [data.length, data.length, 0]);
});

test("a side's end of stream stops the relay, and Node then reads the end itself", TIMEOUT, async (t) => {
  const { client, downstream, relay, stopped } = await watchedRelay(t);
  client.end();
  await until(() => stopped() !== null, 'the relay to stop');
  assert.deepEqual(stopped(), [RelaySide.Downstream, 0]);
  const { fromDownstream, fromUpstream } = relay.close();
  assert.deepEqual([fromDownstream.length, fromUpstream.length], [0, 0]);
  const ended = once(downstream, 'end');
  downstream.resume();
  await ended;
});

test('a reset peer stops it with the errno of the failed read', TIMEOUT, async (t) => {
  const { server, stopped } = await watchedRelay(t);
  server.resetAndDestroy();
  await until(() => stopped() !== null, 'the relay to stop');
  const ECONNRESET = 104;
  assert.deepEqual(stopped(), [RelaySide.Upstream, ECONNRESET]);
});

test('close() hands back the bytes not yet written, which leave the gauge; nothing is lost', TIMEOUT, async (t) => {
  const { client, upstream, server, relay, down } = await runningRelay(t);
  server.pause();
  const data = Buffer.alloc(8 * 1024 * 1024, 'abcdefgh');
  client.write(data);
  await until(() => down.buffered.value() > 0 && down.rx.value() === data.length, 'every byte to reach the relay');
  const waiting = down.buffered.value();
  const { fromDownstream } = relay.close();
  assert.equal(fromDownstream.length, waiting);
  assert.equal(down.buffered.value(), 0);
  assert.equal(down.tx.value() + waiting, data.length);
  // The owner writes them on, after what the relay wrote.
  const received = receive(server, data.length);
  upstream.write(fromDownstream);
  server.resume();
  assert.equal(await received, sha1(data));
});

test('refused, nothing changed: a socket holding unread bytes, and one Node does not read through onread', TIMEOUT, async (t) => {
  const { downstream, upstream } = await connections(t);
  const scope = createHeapStatsStore().scope('relay');
  downstream.pause();
  downstream.unshift(Buffer.from('early'));
  assert.equal(SocketRelay.start(downstream, upstream, flows(scope), () => assert.fail('stopped')), null);
  assert.equal(downstream.readableLength, 5);

  const listener = net.createServer();
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  t.after(() => listener.close());
  const plain = net.connect((listener.address() as net.AddressInfo).port, '127.0.0.1');
  t.after(() => plain.destroy());
  await once(plain, 'connect');
  const other = await proxySocket((listener.address() as net.AddressInfo).port);
  t.after(() => other.destroy());
  assert.equal(SocketRelay.start(other, plain, flows(scope), () => assert.fail('stopped')), null);
  assert.equal(plain.isPaused(), false);
  assert.equal(other.isPaused(), false);
});
