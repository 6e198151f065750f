// The compressor's gzip stream: chunk by chunk, each flushed so that what came so far inflates,
// one valid gzip member in the end, back-references reaching across chunks.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as zlib from 'node:zlib';
import { deflateOptions, GzipStream } from '../../src/filters/http/gzip_stream';

const CONFIG = { level: -1, strategy: 0, memoryLevel: 5, windowBits: 12, chunkSize: 4096 };

function stream(config = CONFIG): GzipStream {
  return new GzipStream(deflateOptions(config), 1 << config.windowBits);
}

test('chunks gzipped one by one make one member that gunzips to the input', () => {
  const input = Buffer.from('the quick brown fox jumps over the lazy dog; '.repeat(400));
  const gzip = stream();
  const parts: Buffer[] = [];
  for (let offset = 0; offset < input.length; offset += 1000) parts.push(gzip.compress(input.subarray(offset, offset + 1000)));
  parts.push(gzip.finish());
  const body = Buffer.concat(parts);
  assert.deepEqual(body.subarray(0, 3), Buffer.from([0x1f, 0x8b, 8]));
  assert.deepEqual(zlib.gunzipSync(body), input);
  // Later chunks refer back to earlier ones: repeated text costs next to nothing.
  assert.ok(parts[5]!.length < 40, `chunk 5 took ${parts[5]!.length} bytes`);
});

test('each chunk is flushed: what came so far inflates before the end', () => {
  const gzip = stream();
  const first = gzip.compress(Buffer.from('hello, '));
  const second = gzip.compress(Buffer.from('world'));
  const inflater = zlib.createGunzip();
  const out: Buffer[] = [];
  inflater.on('data', (chunk: Buffer) => out.push(chunk));
  return new Promise<void>((resolve) => {
    inflater.write(Buffer.concat([first, second]), () => {
      inflater.flush(() => {
        assert.equal(Buffer.concat(out).toString(), 'hello, world');
        inflater.destroy();
        resolve();
      });
    });
  });
});

test('an empty body is a valid member; chunks larger than the window; every level and strategy', () => {
  assert.equal(zlib.gunzipSync(stream().finish()).length, 0);
  const big = Buffer.alloc(100_000, 'abcdefghij');
  for (const [level, strategy, windowBits] of [[1, 0, 9], [9, 1, 15], [-1, 2, 12], [6, 3, 10], [4, 4, 13]] as const) {
    const gzip = stream({ ...CONFIG, level, strategy, windowBits });
    const body = Buffer.concat([gzip.compress(big), gzip.compress(Buffer.from('tail')), gzip.finish()]);
    assert.deepEqual(zlib.gunzipSync(body), Buffer.concat([big, Buffer.from('tail')]), `level ${level} strategy ${strategy}`);
  }
});
