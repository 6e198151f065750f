// HTTP/2 frames against a live worker: a client's first flight (preface, SETTINGS, HEADERS with
// HPACK, DATA) with frames added, reordered or broken: a bad preface, oversized and unknown
// frames, DATA on idle streams, CONTINUATION without END_HEADERS, window overflows, bad
// SETTINGS, self-dependent PRIORITY; then mutated in its bytes. Each goes on a connection of its
// own; after every batch the worker must not have restarted and must still serve h1 and h2c.

import type { FuzzInput, FuzzSurface } from './driver';
import { exchange, loopbackConnector, startLiveProxy } from './live_proxy';
import { below, mutateBytes, pick, type Random } from './mutators';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const DATA = 0x0;
const HEADERS = 0x1;
const PRIORITY = 0x2;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const PING = 0x6;
const GOAWAY = 0x7;
const WINDOW_UPDATE = 0x8;
const CONTINUATION = 0x9;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
/** :method GET, :scheme http, :path / (static table), :authority fuzz (literal, indexed name). */
const REQUEST_BLOCK = Buffer.from([0x82, 0x86, 0x84, 0x41, 0x04, ...Buffer.from('fuzz')]);
/** A peer gets this long to answer one connection before it is closed from here. */
const EXCHANGE_MS = 150;

export const http2Frames: FuzzSurface = {
  name: 'http2_frames',
  timeBoundMs: 3000,
  concurrency: 32,
  async open() {
    const live = await startLiveProxy();
    const connect = loopbackConnector(live.listenerPort);
    return {
      generate(random: Random): FuzzInput {
        const frames = flight(random);
        const bytes = Buffer.concat(frames);
        return { kind: 'h2', bytes: random() < 0.3 ? mutateBytes(random, bytes, 3) : bytes };
      },
      // A connection left open is no fault: the worker may wait for a stream's end, as HTTP/2 lets it.
      async run(input: FuzzInput) {
        await exchange(connect, input.bytes, EXCHANGE_MS);
      },
      checkHealth: () => live.checkHealth(),
      close: () => live.close(),
    };
  },
};

function frame(type: number, flags: number, stream: number, payload: Buffer, length = payload.length): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream >>> 0, 5);
  return Buffer.concat([head, payload]);
}

function u32(...values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, i * 4));
  return b;
}

function settings(random: Random): Buffer {
  const entries = Array.from({ length: below(random, 4) }, () => {
    const b = Buffer.alloc(6);
    b.writeUInt16BE(pick(random, [1, 2, 3, 4, 5, 6, 8, 0xff]), 0);
    b.writeUInt32BE(pick(random, [0, 1, 100, 16383, 16384, 16777215, 16777216, 0x7fffffff, 0x80000000, 0xffffffff]), 2);
    return b;
  });
  return frame(SETTINGS, 0, 0, Buffer.concat(entries));
}

/** One extra frame of the kinds that break state machines. */
function hostileFrame(random: Random, stream: number): Buffer {
  switch (below(random, 12)) {
    case 0:
      return frame(pick(random, [0xa, 0xb, 0x10, 0xff]), below(random, 256), stream, Buffer.alloc(below(random, 64)));
    case 1:
      return frame(DATA, END_STREAM, pick(random, [stream, stream + 2, 0, 2]), Buffer.alloc(below(random, 100)));
    case 2:
      return frame(HEADERS, 0, stream + 2, REQUEST_BLOCK.subarray(0, below(random, REQUEST_BLOCK.length)));
    case 3:
      return frame(CONTINUATION, pick(random, [0, END_HEADERS]), pick(random, [stream, stream + 2, 0]), Buffer.from([0x40, 0x01, 0x61, 0x01, 0x62]));
    case 4:
      return frame(WINDOW_UPDATE, 0, pick(random, [0, stream]), u32(pick(random, [0, 1, 0x7fffffff, 0x80000000])));
    case 5:
      return frame(PRIORITY, 0, stream, Buffer.concat([u32(pick(random, [stream, 0, 0x80000000 | stream])), Buffer.from([below(random, 256)])]).subarray(0, pick(random, [5, 4, 6])));
    case 6:
      return frame(RST_STREAM, 0, pick(random, [stream, 0, stream + 4]), u32(below(random, 16)).subarray(0, pick(random, [4, 3])));
    case 7:
      return frame(PING, pick(random, [0, 1]), pick(random, [0, 1]), Buffer.alloc(pick(random, [8, 7, 9])));
    case 8:
      return frame(GOAWAY, 0, 0, u32(below(random, 10), below(random, 16)));
    case 9:
      // A length field claiming more than SETTINGS_MAX_FRAME_SIZE.
      return frame(pick(random, [DATA, HEADERS, SETTINGS]), 0, stream, Buffer.alloc(below(random, 64)), pick(random, [16385, 0xffffff]));
    case 10:
      return settings(random);
    default:
      return frame(HEADERS, END_HEADERS | END_STREAM | pick(random, [0, 0x8, 0x20]), stream, Buffer.concat([Buffer.from([below(random, 256)]), REQUEST_BLOCK]));
  }
}

function flight(random: Random): Buffer[] {
  const stream = 1 + 2 * below(random, 3);
  const preface = random() < 0.95 ? PREFACE : mutateBytes(random, PREFACE, 2);
  const request = [
    frame(HEADERS, random() < 0.8 ? END_HEADERS : 0, stream, REQUEST_BLOCK),
    ...(random() < 0.5 ? [frame(DATA, END_STREAM, stream, Buffer.from('body'))] : []),
  ];
  const frames = [settings(random), ...request];
  for (let i = below(random, 4); i > 0; i--) frames.splice(below(random, frames.length + 1), 0, hostileFrame(random, stream));
  if (random() < 0.2) frames.reverse();
  return [preface, ...frames];
}
