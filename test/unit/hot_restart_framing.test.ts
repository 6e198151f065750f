// Envoy's framing of hot restart messages: 8-byte big-endian length, then the payload, in
// datagrams of at most 4096 bytes, reassembled in order; garbage is refused, not half-read.

import { test } from 'node:test';
import * as assert from 'node:assert/strict';

import {
  FrameDecoder,
  frameMessage,
  FramingError,
  LENGTH_PREFIX_BYTES,
  MAX_CHUNK_BYTES,
  MAX_PAYLOAD_BYTES,
} from '../../src/hot_restart/framing';

function bytes(length: number): Buffer {
  return Buffer.from(Array.from({ length }, (_, i) => (i * 7 + 3) % 256));
}

function decodeAll(decoder: FrameDecoder, chunks: Buffer[]): (Buffer | null)[] {
  return chunks.map((chunk) => decoder.push(chunk));
}

test('a short message is one datagram: its length big-endian, then the payload', () => {
  const [chunk, ...rest] = frameMessage(Buffer.from('{"version":1}'));
  assert.deepEqual(rest, []);
  assert.deepEqual([...chunk.subarray(0, LENGTH_PREFIX_BYTES)], [0, 0, 0, 0, 0, 0, 0, 13]);
  assert.equal(chunk.subarray(LENGTH_PREFIX_BYTES).toString(), '{"version":1}');
});

test('a long message is cut into full 4096-byte datagrams and a remainder', () => {
  const payload = bytes(10_000);
  const chunks = frameMessage(payload);
  assert.deepEqual(
    chunks.map((c) => c.length),
    [MAX_CHUNK_BYTES, MAX_CHUNK_BYTES, 10_000 + LENGTH_PREFIX_BYTES - 2 * MAX_CHUNK_BYTES],
  );
  assert.equal(chunks[0].readBigUInt64BE(0), 10_000n);
});

test('the decoder returns the payload only with its last datagram', () => {
  const payload = bytes(9000);
  const decoder = new FrameDecoder();
  const results = decodeAll(decoder, frameMessage(payload));
  assert.deepEqual(results.slice(0, -1), [null, null]);
  assert.deepEqual(results.at(-1), payload);
  assert.equal(decoder.midMessage, false);
});

test('messages follow each other on one decoder, whatever the chunk size', () => {
  const decoder = new FrameDecoder();
  const first = bytes(100);
  const second = bytes(31);
  const chunks = [...frameMessage(first, 16), ...frameMessage(second, 9)];
  const payloads = decodeAll(decoder, chunks).filter((p) => p !== null);
  assert.deepEqual(payloads, [first, second]);
});

test('an empty payload is a message of its own', () => {
  const decoder = new FrameDecoder();
  assert.deepEqual(decoder.push(frameMessage(Buffer.alloc(0))[0]), Buffer.alloc(0));
});

test('a first datagram shorter than the length prefix is garbage', () => {
  assert.throws(() => new FrameDecoder().push(Buffer.from('hello')), FramingError);
});

test('an announced length beyond the limit is garbage', () => {
  const header = Buffer.alloc(LENGTH_PREFIX_BYTES);
  header.writeBigUInt64BE(BigInt(MAX_PAYLOAD_BYTES) + 1n);
  assert.throws(() => new FrameDecoder().push(header), /more than the 1048576 allowed/);
  const huge = Buffer.alloc(LENGTH_PREFIX_BYTES, 0xff);
  assert.throws(() => new FrameDecoder().push(huge), FramingError);
});

test('a datagram running past its message is garbage, and the decoder starts over after it', () => {
  const decoder = new FrameDecoder();
  const [head] = frameMessage(bytes(20), 12);
  assert.equal(decoder.push(head), null);
  assert.throws(() => decoder.push(bytes(50)), /ran past the end of its message/);
  assert.equal(decoder.midMessage, false);
  const next = bytes(5);
  assert.deepEqual(decoder.push(frameMessage(next)[0]), next);
});

test('reset drops a message whose rest was lost', () => {
  const decoder = new FrameDecoder();
  decoder.push(frameMessage(bytes(5000))[0]);
  assert.equal(decoder.midMessage, true);
  decoder.reset();
  const next = bytes(3);
  assert.deepEqual(decoder.push(frameMessage(next)[0]), next);
});

test('a chunk size that cannot hold the length prefix is refused', () => {
  assert.throws(() => frameMessage(bytes(3), 7), RangeError);
});
