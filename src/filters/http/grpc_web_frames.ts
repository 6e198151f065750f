// The gRPC-Web body formats (gRPC's PROTOCOL-WEB.md) as the grpc_web filter converts them, chunk
// by chunk: base64 text decoded four characters at a time whatever the chunk boundaries, gRPC
// frames (a flags byte, a 32-bit big-endian length, the message) cut out of a byte stream, and
// the trailer frame (flags 0x80) that carries a response's trailers in its body. Pure.

/** A frame's header: the flags byte and the length. */
const FRAME_HEADER_BYTES = 5;
/** The flags of a trailer frame. */
export const TRAILER_FRAME_FLAGS = 0x80;
/** Envoy's gRPC decoder takes frames flagged 0 (plain) or 1 (compressed) only. */
const COMPRESSED_FLAG = 0x01;
/** Whole groups of four base64 characters, padding only in the last. */
const BASE64_GROUPS = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const NO_BYTES = Buffer.alloc(0);

/** A grpc-web-text body, decoded as it comes (Envoy's decodeData on application/grpc-web-text). */
export class Base64Decoder {
  /** Characters short of a group of four, kept for the next chunk. */
  private pending = '';

  /** The bytes of the groups `chunk` completes; null when they are not canonical base64. */
  decode(chunk: Buffer): Buffer | null {
    const text = this.pending + chunk.toString('latin1');
    const whole = text.length - (text.length % 4);
    this.pending = text.slice(whole);
    if (whole === 0) return NO_BYTES;
    const groups = whole === text.length ? text : text.slice(0, whole);
    if (!BASE64_GROUPS.test(groups) || !zeroPadBits(groups)) return null;
    return Buffer.from(groups, 'base64');
  }

  /** Characters at the end that make no group of four: a body that ends with some is not base64. */
  get leftover(): number {
    return this.pending.length;
  }
}

/** Base64 that ends in padding leaves the unused bits of its last character zero (RFC 4648 canonical form). */
function zeroPadBits(groups: string): boolean {
  if (!groups.endsWith('=')) return true;
  const two = groups.endsWith('==');
  const last = groups.charCodeAt(groups.length - (two ? 3 : 2));
  return (sextet(last) & (two ? 0x0f : 0x03)) === 0;
}

function sextet(code: number): number {
  if (code >= 0x41 && code <= 0x5a) return code - 0x41;
  if (code >= 0x61 && code <= 0x7a) return code - 0x61 + 26;
  if (code >= 0x30 && code <= 0x39) return code - 0x30 + 52;
  return code === 0x2b ? 62 : 63;
}

/** gRPC frames cut out of a body as it comes, each whole with its header (Envoy's Grpc::Decoder). */
export class GrpcFrameReader {
  /** What came of the frame under way, joined only once it is whole. */
  private chunks: Buffer[] = [];
  private bytes = 0;
  /** The bytes the frame under way needs: its header, then all of it once its length is known. */
  private needed = FRAME_HEADER_BYTES;
  /** A frame had flags gRPC does not define: nothing more is read, as Envoy's decoder stops. */
  private broken = false;

  /** The frames `chunk` completes. */
  frames(chunk: Buffer): Buffer[] {
    if (this.broken) return [];
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    if (this.bytes < this.needed) return [];
    let data = this.chunks.length === 1 ? chunk : Buffer.concat(this.chunks);
    const frames: Buffer[] = [];
    this.needed = FRAME_HEADER_BYTES;
    while (data.length >= FRAME_HEADER_BYTES) {
      if ((data[0]! & ~COMPRESSED_FLAG) !== 0) {
        this.broken = true;
        this.chunks = [];
        this.bytes = 0;
        return frames;
      }
      const end = FRAME_HEADER_BYTES + data.readUInt32BE(1);
      if (data.length < end) {
        this.needed = end;
        break;
      }
      frames.push(data.subarray(0, end));
      data = data.subarray(end);
    }
    // A copy, so that a partial frame does not keep the whole chunk alive.
    this.chunks = data.length === 0 ? [] : [Buffer.from(data)];
    this.bytes = data.length;
    return frames;
  }
}

/** The trailer frame of `trailers` [name, value, ...]: each as `name:value\r\n`, in order. */
export function trailerFrame(trailers: readonly string[]): Buffer {
  let text = '';
  for (let i = 0; i < trailers.length; i += 2) text += `${trailers[i]}:${trailers[i + 1]}\r\n`;
  const payload = Buffer.from(text, 'latin1');
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  frame[0] = TRAILER_FRAME_FLAGS;
  frame.writeUInt32BE(payload.length, 1);
  payload.copy(frame, FRAME_HEADER_BYTES);
  return frame;
}
