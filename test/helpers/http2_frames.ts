// HTTP/2 frames written by hand (RFC 9113 section 4.1), for tests that play a client node:http2
// would never be: floods of PING, PRIORITY, empty DATA, resets, CONTINUATION.

export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export const TYPE = { DATA: 0, HEADERS: 1, PRIORITY: 2, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const;
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8 } as const;

export function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

/** SETTINGS with [id, value] pairs. */
export function settings(entries: [number, number][] = []): Buffer {
  const payload = Buffer.alloc(entries.length * 6);
  entries.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value, i * 6 + 2);
  });
  return frame(TYPE.SETTINGS, 0, 0, payload);
}

export function ping(): Buffer {
  return frame(TYPE.PING, 0, 0, Buffer.alloc(8));
}

export function priority(streamId: number, dependsOn = 0): Buffer {
  const payload = Buffer.alloc(5);
  payload.writeUInt32BE(dependsOn, 0);
  payload[4] = 15;
  return frame(TYPE.PRIORITY, 0, streamId, payload);
}

export function windowUpdate(streamId: number, increment: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(increment, 0);
  return frame(TYPE.WINDOW_UPDATE, 0, streamId, payload);
}

export function rstStream(streamId: number, code = 8): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code, 0);
  return frame(TYPE.RST_STREAM, 0, streamId, payload);
}

/**
 * A GET's header block in HPACK without the dynamic table: `:method GET`, `:scheme http`,
 * `:path /` from the static table, `:authority` a literal.
 */
export function getRequestBlock(authority = 'flood.example', path = '/'): Buffer {
  const pathField = path === '/' ? Buffer.from([0x84]) : literalWithIndexedName(4, path);
  return Buffer.concat([Buffer.from([0x82, 0x86]), pathField, literalWithIndexedName(1, authority)]);
}

/** A literal header field without indexing, its name the static table's entry `index` (< 15). */
function literalWithIndexedName(index: number, value: string): Buffer {
  const bytes = Buffer.from(value, 'latin1');
  return Buffer.concat([Buffer.from([index, bytes.length]), bytes]);
}

/** HEADERS opening `streamId` with a GET, ending the stream. */
export function getRequest(streamId: number, path = '/'): Buffer {
  return frame(TYPE.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, streamId, getRequestBlock('flood.example', path));
}

export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

/** The whole frames in `bytes` (a server's output, its preface-less start included). */
export function framesOf(bytes: Buffer): Frame[] {
  const frames: Frame[] = [];
  let at = 0;
  while (at + 9 <= bytes.length) {
    const length = bytes.readUIntBE(at, 3);
    if (at + 9 + length > bytes.length) break;
    frames.push({ type: bytes[at + 3], flags: bytes[at + 4], streamId: bytes.readUInt32BE(at + 5) & 0x7fffffff, payload: bytes.subarray(at + 9, at + 9 + length) });
    at += 9 + length;
  }
  return frames;
}

/** The error code of the GOAWAY among `frames`, or null without one. */
export function goAwayCode(frames: readonly Frame[]): number | null {
  const goAway = frames.find((f) => f.type === TYPE.GOAWAY);
  return goAway === undefined ? null : goAway.payload.readUInt32BE(4);
}
