// The gRPC-Web body conversions: base64 decoded across any chunk boundaries (and refused when it
// is not canonical base64), gRPC frames cut out of a byte stream, and the trailer frame.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Base64Decoder, GrpcFrameReader, trailerFrame } from '../../src/filters/http/grpc_web_frames';

function frame(flags: number, payload: string): Buffer {
  const header = Buffer.alloc(5);
  header[0] = flags;
  header.writeUInt32BE(Buffer.byteLength(payload), 1);
  return Buffer.concat([header, Buffer.from(payload)]);
}

test('base64 split anywhere decodes to the same bytes', () => {
  const bytes = Buffer.concat([frame(0, 'hello gRPC-Web'), frame(0, 'x')]);
  const text = bytes.toString('base64');
  for (let cut = 0; cut <= text.length; cut++) {
    for (const second of [cut, Math.min(text.length, cut + 3)]) {
      const decoder = new Base64Decoder();
      const out = [text.slice(0, cut), text.slice(cut, second), text.slice(second)].map((part) => decoder.decode(Buffer.from(part, 'latin1')));
      assert.ok(out.every((part) => part !== null));
      assert.deepEqual(Buffer.concat(out as Buffer[]), bytes, `cut at ${cut}, ${second}`);
      assert.equal(decoder.leftover, 0);
    }
  }
});

test('padding may end each piece that is decoded on its own; a body short of a group is left over', () => {
  const decoder = new Base64Decoder();
  assert.equal(decoder.decode(Buffer.from('QQ=='))!.toString(), 'A');
  assert.equal(decoder.decode(Buffer.from('QkM='))!.toString(), 'BC');
  assert.equal(decoder.decode(Buffer.from('QU'))!.length, 0);
  assert.equal(decoder.leftover, 2);
});

test('what is not canonical base64 is refused', () => {
  for (const bad of ['QQ==QQ==', 'Q!==', '====', 'QR==', 'QUJ=', 'QQ=A']) assert.equal(new Base64Decoder().decode(Buffer.from(bad)), null, bad);
});

test('frames are cut out whole whatever the chunks, each with its header', () => {
  const frames = [frame(0, 'first'), frame(1, ''), frame(0, 'third message')];
  const body = Buffer.concat(frames);
  for (let size = 1; size <= body.length; size++) {
    const reader = new GrpcFrameReader();
    const out: Buffer[] = [];
    for (let offset = 0; offset < body.length; offset += size) out.push(...reader.frames(body.subarray(offset, offset + size)));
    assert.deepEqual(out, frames, `chunks of ${size}`);
  }
});

test('a frame with flags gRPC does not define ends the reading', () => {
  const reader = new GrpcFrameReader();
  assert.deepEqual(reader.frames(Buffer.concat([frame(0, 'ok'), frame(0x42, 'bad'), frame(0, 'later')])), [frame(0, 'ok')]);
  assert.deepEqual(reader.frames(frame(0, 'more')), []);
});

test('the trailer frame: flags 0x80, the length, name:value CRLF per trailer in order', () => {
  const built = trailerFrame(['grpc-status', '0', 'grpc-message', 'ok', 'x-t', 'v']);
  assert.equal(built[0], 0x80);
  assert.equal(built.readUInt32BE(1), built.length - 5);
  assert.equal(built.subarray(5).toString(), 'grpc-status:0\r\ngrpc-message:ok\r\nx-t:v\r\n');
  assert.deepEqual(trailerFrame([]), Buffer.from([0x80, 0, 0, 0, 0]));
});
