// Measuring backpressure in bytes: a writer that pushes a payload as fast as its peer takes
// it, the bytes the kernel holds in the TCP queues of given connections (/proc/net/tcp), and
// a wait for the writer to stall. What the proxy holds is what was sent, minus what arrived,
// minus what the kernel holds.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type * as net from 'node:net';
import type { Writable } from 'node:stream';

/** A payload of `size` bytes that is not all one byte, and its sha256. */
export function payload(size: number): { data: Buffer; sha256: string } {
  const data = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4) data.writeUInt32LE(i, i);
  return { data, sha256: createHash('sha256').update(data).digest('hex') };
}

export interface Pusher {
  /** Bytes the kernel has taken from the socket so far. */
  accepted(): number;
}

/**
 * Writes `data` to `socket` (or an HTTP/2 stream) in slices, each once the last left Node's
 * buffer; with `end`, ends it after the last.
 */
export function push(socket: Writable, data: Buffer, slice = 64 * 1024, end = false): Pusher {
  let offset = 0;
  const next = (): void => {
    while (offset < data.length) {
      const sliceEnd = Math.min(offset + slice, data.length);
      const more = socket.write(data.subarray(offset, sliceEnd));
      offset = sliceEnd;
      if (!more) {
        socket.once('drain', next);
        return;
      }
    }
    if (end) socket.end();
  };
  next();
  return { accepted: () => offset - socket.writableLength };
}

/**
 * Bytes in the kernel's send and receive queues of every TCP connection with a port in
 * `ports` at either end (listening sockets aside), from /proc/net/tcp.
 */
export function kernelQueuedBytes(ports: readonly number[]): number {
  let total = 0;
  for (const line of readFileSync('/proc/net/tcp', 'latin1').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 5 || fields[3] === '0A') continue;
    const local = parseInt(fields[1].split(':')[1], 16);
    const remote = parseInt(fields[2].split(':')[1], 16);
    if (!ports.includes(local) && !ports.includes(remote)) continue;
    const [tx, rx] = fields[4].split(':').map((hex) => parseInt(hex, 16));
    total += tx + rx;
  }
  return total;
}

/**
 * Waits until `ready` holds and the writer has taken no more bytes over several polls (it is
 * stalled on backpressure); fails after 10 s.
 */
export async function stalled(pusher: Pusher, ready: () => boolean): Promise<void> {
  let last = -1;
  let still = 0;
  for (let i = 0; i < 500; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const now = pusher.accepted();
    still = now === last ? still + 1 : 0;
    last = now;
    if (still >= 5 && ready()) return;
  }
  assert.fail(`the writer never stalled (accepted ${last} bytes)`);
}

/** Reads `socket` until `size` bytes after the first `skip` have arrived; their sha256. */
export function receive(socket: net.Socket, size: number, skip = 0): Promise<string> {
  const hash = createHash('sha256');
  let seen = 0;
  return new Promise((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      const from = Math.max(0, skip - seen);
      seen += chunk.length;
      if (from < chunk.length) hash.update(chunk.subarray(from));
      if (seen >= skip + size) resolve(hash.digest('hex'));
    });
    socket.on('error', reject);
  });
}

/** Reads an HTTP/1 message off `socket` until a body of `size` bytes has followed its head; the body. */
export function bodyAfterHead(socket: net.Socket, size: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  return new Promise((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
      if (length <= size) return;
      const all = Buffer.concat(chunks);
      chunks.length = 0;
      chunks.push(all);
      const start = all.indexOf('\r\n\r\n') + 4;
      if (start >= 4 && all.length - start >= size) resolve(all.subarray(start));
    });
  });
}
