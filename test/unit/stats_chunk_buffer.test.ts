// The byte writer of the /stats renderers: what it writes is what String, UTF-8 and
// JSON.stringify would make, whatever the text, and chunks come when due.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChunkBuffer } from '../../src/admin/stats/chunk_buffer';

const written = (write: (out: ChunkBuffer) => void): string => {
  const out = new ChunkBuffer();
  write(out);
  return out.take().toString('utf8');
};

test('numbers read as String() prints them: integers by digits, anything else as is', () => {
  const values = [0, -0, 7, 10, 99, 100, 123456789, -42, 2 ** 32, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 53, 1e21, 0.5, -1.25, 1e-7, NaN, Infinity, -Infinity];
  for (const value of values) assert.equal(written((out) => out.number(value)), String(value), String(value));
  for (let value = 0; value < 2000; value += 7) assert.equal(written((out) => out.number(value)), String(value));
});

test('text is UTF-8 whatever its characters, next to ASCII written before and after', () => {
  const texts = ['cluster.a.upstream_rq_total', 'cluster.café.x', 'σ.日本.x', 'emoji.😀.x', 'lone.\ud800.x', ''];
  for (const text of texts) {
    assert.equal(written((out) => (out.text('a:'), out.text(text), out.text(':b'))), Buffer.from(`a:${text}:b`).toString('utf8'), text);
  }
});

test('JSON strings are what JSON.stringify makes of them', () => {
  const texts = ['plain.name', 'odd."name\\', 'tab\there', 'nl\n', 'café', '😀', '\u0001'];
  for (const text of texts) assert.equal(written((out) => out.jsonString(text)), JSON.stringify(text), text);
});

test('a chunk is due after 128 KiB or 4096 stats, and text longer than a chunk grows it', () => {
  const out = new ChunkBuffer();
  let steps = 0;
  while (!out.step()) steps++;
  assert.equal(steps, 4095);
  assert.equal(out.take().length, 0);
  const long = 'x'.repeat(300 * 1024);
  out.text(long);
  out.text('é');
  assert.ok(out.step());
  assert.equal(out.take().toString('utf8'), `${long}é`);
  out.text('next');
  assert.equal(out.take().toString(), 'next');
});
