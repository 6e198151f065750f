// The write batch on real loopback sockets: while the event loop is busy, small writes of one turn
// wait for its end and then leave in order; a write that would cross the low watermark goes at
// once, after what waited; the buffered gauge comes back to zero either way. An event loop with
// time to spare writes at once. A chunk goes to the kernel through the addon, not through Node's
// buffer, and what the kernel does not take follows through Node, in order. On a TLS socket, whose
// writes complete later, the write carries the callback that brings the gauge back, batched or not.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { test, type TestContext } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { WatermarkWriter, type WatermarkCallbacks } from '../../src/network/watermark_writer';
import { holdsAfter, WriteBatch } from '../../src/network/write_batch';
import type { Counter, Gauge } from '../../src/stats/stats';
import { createHash } from 'node:crypto';
import { makeCa } from '../helpers/certificates';
import { ManualClock } from '../helpers/manual_clock';

const TIMEOUT = { timeout: 10_000 };

/** A stat that counts in this process only. */
function stat(name: string): Counter & Gauge {
  let current = 0;
  return {
    name,
    inc: () => current++,
    dec: () => current--,
    add: (n: number) => (current += n),
    sub: (n: number) => (current -= n),
    set: (v: number) => (current = v),
    value: () => current,
    statCell: () => null,
  };
}

/** Keeps the event loop busy for `ms`: its utilization over that time is about 1. */
function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** A batch whose first utilization sample found the event loop busy: it holds small writes. */
function busyBatch(t: TestContext): WriteBatch {
  const clock = new ManualClock();
  const batch = new WriteBatch(clock);
  t.after(() => batch.close());
  spin(150);
  clock.advance(100);
  assert.equal(batch.holds, true);
  return batch;
}

const NO_WATERMARKS: WatermarkCallbacks = { onAboveHighWatermark: () => undefined, onBelowLowWatermark: () => undefined };

/** `count` pairs (see pairs), each server side written through a writer of `limit` on one busy batch, their stats shared. */
async function batchedPairs(t: TestContext, count: number, limit: number) {
  const peers = await pairs(t, count);
  const batch = busyBatch(t);
  const written = stat('written');
  const buffered = stat('buffered');
  const writers = peers.map((peer) => new WatermarkWriter(peer.socket, limit, { written, buffered }, NO_WATERMARKS, batch));
  return { peers, writers, written, buffered };
}

interface Pair {
  /** The server's socket, which the test writes. */
  socket: net.Socket;
  /** What the client has read so far, and a wait for its first `n` bytes. */
  received: () => string;
  bytes: (n: number) => Promise<string>;
  /** The bytes that reached the client's receive queue and it has not read. */
  inKernel: () => number;
}

/** `count` connected pairs on 127.0.0.1. */
async function pairs(t: TestContext, count: number): Promise<Pair[]> {
  const accepted: net.Socket[] = [];
  const server = net.createServer((s) => accepted.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const clients: net.Socket[] = [];
  for (let i = 0; i < count; i++) {
    const client = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => client.once('connect', resolve));
    clients.push(client);
  }
  while (accepted.length < count) await new Promise((resolve) => setTimeout(resolve, 5));
  t.after(() => {
    for (const s of [...accepted, ...clients]) s.destroy();
    server.close();
  });
  return clients.map((client, i) => ({ socket: accepted[i]!, ...reader(client), inKernel: () => receiveQueue(client.localPort!) }));
}

/** The receive queue of the IPv4 socket bound to local port `port` (/proc/net/tcp). */
function receiveQueue(port: number): number {
  for (const line of fs.readFileSync('/proc/net/tcp', 'latin1').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 5 || parseInt(fields[1]!.split(':')[1]!, 16) !== port) continue;
    return parseInt(fields[4]!.split(':')[1]!, 16);
  }
  throw new Error(`no socket on local port ${port}`);
}

/** What `client` has read so far, and a wait for its first `n` bytes. */
function reader(client: net.Socket): { received: () => string; bytes: (n: number) => Promise<string> } {
  let text = '';
  client.setEncoding('latin1');
  client.on('data', (c: string) => (text += c));
  const bytes = async (n: number): Promise<string> => {
    while (text.length < n) await new Promise((resolve) => client.once('data', resolve));
    return text;
  };
  return { received: () => text, bytes };
}

test('holding starts above 80% event loop utilization and ends below 60%', () => {
  assert.equal(holdsAfter(false, 0.8), false);
  assert.equal(holdsAfter(false, 0.81), true);
  assert.equal(holdsAfter(true, 0.6), true);
  assert.equal(holdsAfter(true, 0.59), false);
});

test('a batch holds writes only after a busy period of the event loop, and lets go after a quiet one', TIMEOUT, async (t) => {
  const [a] = await pairs(t, 1);
  const clock = new ManualClock();
  const batch = new WriteBatch(clock);
  t.after(() => batch.close());
  const writer = new WatermarkWriter(a!.socket, 64 * 1024, { written: stat('written'), buffered: stat('buffered') }, NO_WATERMARKS, batch);
  writer.write('idle ');
  assert.equal(a!.inKernel(), 5, 'written at once while nothing was measured busy');
  spin(150);
  clock.advance(100);
  writer.write('busy ');
  assert.equal(a!.inKernel(), 5, 'held after a busy period');
  assert.equal(await a!.bytes(10), 'idle busy ');
  await new Promise((resolve) => setTimeout(resolve, 300));
  clock.advance(100);
  assert.equal(batch.holds, false);
  writer.write('quiet');
  assert.equal(a!.inKernel(), 5);
  assert.equal(await a!.bytes(15), 'idle busy quiet');
});

test('small writes to several sockets wait for the end of the turn, then leave in order', TIMEOUT, async (t) => {
  const { peers: [a, b], writers: [writerA, writerB], written, buffered } = await batchedPairs(t, 2, 64 * 1024);

  assert.equal(writerA!.write('a1 '), false);
  assert.equal(writerB!.writePair('b1 ', Buffer.from('b2 ')), false);
  assert.equal(writerA!.write(Buffer.from('a2')), false);
  // Nothing reached the kernel yet, nor waits in Node's buffers.
  assert.deepEqual([a!.inKernel(), b!.inKernel()], [0, 0]);
  assert.deepEqual([a!.socket.writableLength, b!.socket.writableLength], [0, 0]);
  assert.equal(written.value(), 11);

  await nextTurn();
  assert.equal(await a!.bytes(5), 'a1 a2');
  assert.equal(await b!.bytes(6), 'b1 b2 ');
  assert.equal(buffered.value(), 0);

  // The next turn's writes are batched again.
  writerA!.write('a3');
  assert.equal(a!.inKernel(), 0);
  await nextTurn();
  assert.equal(await a!.bytes(7), 'a1 a2a3');
});

test('a write that would cross the low watermark goes at once, after what waited', TIMEOUT, async (t) => {
  const [a] = await pairs(t, 1);
  const buffered = stat('buffered');
  // Low watermark: 512 bytes.
  const batch = busyBatch(t);
  const writer = new WatermarkWriter(a!.socket, 1024, { written: stat('written'), buffered }, NO_WATERMARKS, batch);
  writer.write('x'.repeat(100));
  assert.equal(a!.inKernel(), 0);
  writer.write(Buffer.alloc(600, 'y'));
  assert.equal(a!.inKernel(), 700, 'sent with the large write');
  const text = await a!.bytes(700);
  assert.equal(text, 'x'.repeat(100) + 'y'.repeat(600));
  await nextTurn();
  assert.equal(buffered.value(), 0);
});

test('without a batch every write goes to the kernel at once', TIMEOUT, async (t) => {
  const [a] = await pairs(t, 1);
  const writer = new WatermarkWriter(a!.socket, 1024, { written: stat('written'), buffered: stat('buffered') }, NO_WATERMARKS);
  writer.write('now');
  assert.equal(a!.inKernel(), 3);
  assert.equal(a!.socket.writableLength, 0);
  assert.equal(await a!.bytes(3), 'now');
});

test('a socket destroyed before the end of the turn is left alone by the flush', TIMEOUT, async (t) => {
  const { peers: [a, b], writers: [writerA, writerB] } = await batchedPairs(t, 2, 1024);
  writerA!.write('lost');
  writerB!.write('kept');
  a!.socket.destroy();
  await nextTurn();
  assert.equal(await b!.bytes(4), 'kept');
  assert.equal(a!.received(), '');
});

/** A TLS connection on 127.0.0.1: the server's socket (written), the lengths of the writes made to it, and what the client reads. */
async function tlsPair(t: TestContext) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-write-batch-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const { cert, key } = makeCa(dir, 'server', 1);
  const accepted: tls.TLSSocket[] = [];
  const server = tls.createServer({ cert: fs.readFileSync(cert), key: fs.readFileSync(key) }, (s) => accepted.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = tls.connect({ port: (server.address() as net.AddressInfo).port, host: '127.0.0.1', rejectUnauthorized: false });
  await new Promise((resolve) => client.once('secureConnect', resolve));
  while (accepted.length < 1) await new Promise((resolve) => setTimeout(resolve, 5));
  const socket = accepted[0]!;
  t.after(() => {
    client.destroy();
    socket.destroy();
    server.close();
  });
  // Counts the writes the writer makes, passing each on unchanged.
  const writes: number[] = [];
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = ((...args: unknown[]) => {
    writes.push((args[0] as string | Buffer).length);
    return write(...args);
  }) as typeof socket.write;
  return { socket, writes, bytes: reader(client).bytes };
}

/** Waits until `gauge` reads 0. */
async function drained(gauge: Gauge): Promise<void> {
  for (let i = 0; i < 200 && gauge.value() !== 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(gauge.value(), 0);
}

test('on a TLS socket the write itself carries the callback that brings the buffered gauge back to zero', TIMEOUT, async (t) => {
  const { socket, writes, bytes } = await tlsPair(t);
  const buffered = stat('buffered');
  const writer = new WatermarkWriter(socket, 1024, { written: stat('written'), buffered }, NO_WATERMARKS);
  writer.write('one');
  assert.notEqual(socket.writableLength, 0, 'a TLS write completes later');
  assert.equal(buffered.value(), 3);
  assert.equal(await bytes(3), 'one');
  await drained(buffered);
  writer.writePair('two ', Buffer.from('three'));
  assert.equal(await bytes(12), 'onetwo three');
  await drained(buffered);
  assert.deepEqual(writes, [3, 4, 5], 'no zero-length write followed them');
});

test('on a TLS socket a batched write carries that callback too', TIMEOUT, async (t) => {
  const { socket, writes, bytes } = await tlsPair(t);
  const buffered = stat('buffered');
  const writer = new WatermarkWriter(socket, 1024, { written: stat('written'), buffered }, NO_WATERMARKS, busyBatch(t));
  writer.write('held ');
  writer.write('together');
  assert.equal(socket.writableCorked, 1);
  await nextTurn();
  assert.equal(await bytes(13), 'held together');
  await drained(buffered);
  assert.deepEqual(writes, [5, 8], 'no zero-length write followed them');
});

test('text and a chunk go to the kernel in one send through the addon, never through Node', TIMEOUT, async (t) => {
  const [a] = await pairs(t, 1);
  const writer = new WatermarkWriter(a!.socket, 64 * 1024, { written: stat('written'), buffered: stat('buffered') }, NO_WATERMARKS);
  writer.writePair('head ', Buffer.alloc(4096, 'b'));
  writer.write(Buffer.from(' tail'));
  assert.equal(a!.inKernel(), 5 + 4096 + 5);
  // Node counts what goes through its stream layer: nothing did.
  assert.equal(a!.socket.bytesWritten, 0);
  assert.equal(await a!.bytes(4106), 'head ' + 'b'.repeat(4096) + ' tail');
});

test('a batched chunk waits for the end of the turn, then goes in one send with the text before it', TIMEOUT, async (t) => {
  const { peers: [a], writers: [writer] } = await batchedPairs(t, 1, 64 * 1024);
  writer!.writePair('head ', Buffer.alloc(2048, 'c'));
  assert.equal(a!.inKernel(), 0);
  await nextTurn();
  assert.equal(a!.inKernel(), 5 + 2048);
  assert.equal(a!.socket.bytesWritten, 0);
});

test('what the kernel does not take follows through Node, and later writes queue behind it', TIMEOUT, async (t) => {
  const [a] = await pairs(t, 1);
  const buffered = stat('buffered');
  const writer = new WatermarkWriter(a!.socket, 0, { written: stat('written'), buffered }, NO_WATERMARKS);
  const big = Buffer.alloc(32 * 1024 * 1024);
  for (let i = 0; i < big.length; i += 4) big.writeUInt32LE(i, i);
  writer.writePair('first ', big);
  assert.ok(a!.socket.writableLength > 0 && a!.socket.writableLength < big.length, `${a!.socket.writableLength} bytes left to Node`);
  assert.equal(buffered.value(), a!.socket.writableLength);
  writer.writePair(' then ', Buffer.from('last'));
  const expected = createHash('sha1').update('first ').update(big).update(' then last').digest('hex');
  const total = 6 + big.length + 10;
  const received = await a!.bytes(total);
  assert.equal(createHash('sha1').update(Buffer.from(received, 'latin1')).digest('hex'), expected);
  while (buffered.value() !== 0) await new Promise((resolve) => setTimeout(resolve, 5));
});

test('end() sends what waits for the end of the turn before the half-close', TIMEOUT, async (t) => {
  const { peers: [a], writers: [writer] } = await batchedPairs(t, 1, 64 * 1024);
  writer!.write('last words');
  writer!.end();
  assert.equal(await a!.bytes(10), 'last words');
});
