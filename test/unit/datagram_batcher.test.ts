// DatagramBatcher (src/stats/sinks/datagram_batcher.ts): Envoy 1.16's UDP statsd writer, which
// gathers lines up to max_bytes_per_datagram and sends each one alone without it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DatagramBatcher } from '../../src/stats/sinks/datagram_batcher';

function batch(maxBytes: number, lines: readonly string[]): string[] {
  const sent: string[] = [];
  const batcher = new DatagramBatcher(maxBytes, (datagram) => sent.push(datagram));
  for (const line of lines) batcher.add(line);
  batcher.flush();
  return sent;
}

test('without a size, every line is a datagram of its own', () => {
  assert.deepEqual(batch(0, ['a:1|c', 'b:2|g']), ['a:1|c', 'b:2|g']);
});

test('lines are joined by newlines up to the size, newlines counted', () => {
  // 5 + 1 + 5 = 11 bytes fit in 11; a third line would make 17.
  assert.deepEqual(batch(11, ['a:1|c', 'b:2|c', 'c:3|c']), ['a:1|c\nb:2|c', 'c:3|c']);
  assert.deepEqual(batch(10, ['a:1|c', 'b:2|c']), ['a:1|c', 'b:2|c']);
  assert.deepEqual(batch(100, ['a:1|c', 'b:2|c', 'c:3|c']), ['a:1|c\nb:2|c\nc:3|c']);
});

test('a line as large as the size goes alone at once, and the gathered ones wait for the next', () => {
  assert.deepEqual(batch(8, ['a:1|c', 'long.name:1|c', 'b:2|c']), ['long.name:1|c', 'a:1|c', 'b:2|c']);
  assert.deepEqual(batch(5, ['a:1|c']), ['a:1|c']);
});

test('sizes are bytes: a multi-byte name fills a datagram sooner', () => {
  // 'é' is two bytes: each line is 6 bytes, two of them and a newline 13.
  assert.deepEqual(batch(12, ['é:1|c', 'é:2|c']), ['é:1|c', 'é:2|c']);
  assert.deepEqual(batch(13, ['é:1|c', 'é:2|c']), ['é:1|c\né:2|c']);
});

test('a flush with nothing gathered sends nothing', () => {
  assert.deepEqual(batch(100, []), []);
});
