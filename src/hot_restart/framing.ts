// How one hot restart message travels as datagrams, as Envoy frames it: an 8-byte big-endian
// payload length, then the payload, cut into sendmsg pieces of at most 4096 bytes.

import { HotRestartError } from './errors';

export const MAX_CHUNK_BYTES = 4096;
export const LENGTH_PREFIX_BYTES = 8;
/** Far above any real message; a larger announced length means the stream is garbage. */
export const MAX_PAYLOAD_BYTES = 1 << 20;

/** The datagram stream broke the framing rules; the decoder has dropped the partial message. */
export class FramingError extends HotRestartError {
  override readonly name = 'FramingError';
}

/** The datagrams that carry `payload`, in order. */
export function frameMessage(payload: Uint8Array, maxChunkBytes = MAX_CHUNK_BYTES): Buffer[] {
  if (maxChunkBytes < LENGTH_PREFIX_BYTES) {
    throw new RangeError(`maxChunkBytes must be at least ${LENGTH_PREFIX_BYTES}, got ${maxChunkBytes}`);
  }
  const framed = Buffer.allocUnsafe(LENGTH_PREFIX_BYTES + payload.length);
  framed.writeBigUInt64BE(BigInt(payload.length), 0);
  framed.set(payload, LENGTH_PREFIX_BYTES);
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < framed.length; offset += maxChunkBytes) {
    chunks.push(framed.subarray(offset, offset + maxChunkBytes));
  }
  return chunks;
}

/** Reassembles payloads from datagrams received in order on one socket. */
export class FrameDecoder {
  private payload: Buffer | null = null;
  private received = 0;

  /** True between the first and the last datagram of a message. */
  get midMessage(): boolean {
    return this.payload !== null;
  }

  /** Drops the message being reassembled, after a datagram of it was lost. */
  reset(): void {
    this.payload = null;
  }

  /** Takes the next datagram; returns the payload it completes, or null if more must come. */
  push(chunk: Uint8Array): Buffer | null {
    if (this.payload === null) return this.start(chunk);
    return this.append(chunk);
  }

  private start(chunk: Uint8Array): Buffer | null {
    if (chunk.length < LENGTH_PREFIX_BYTES) {
      throw new FramingError(`a message began with a ${chunk.length}-byte datagram, shorter than its length prefix`);
    }
    const announced = Buffer.from(chunk.buffer, chunk.byteOffset, LENGTH_PREFIX_BYTES).readBigUInt64BE(0);
    if (announced > BigInt(MAX_PAYLOAD_BYTES)) {
      throw new FramingError(`a message announced ${announced} bytes, more than the ${MAX_PAYLOAD_BYTES} allowed`);
    }
    this.payload = Buffer.alloc(Number(announced));
    this.received = 0;
    return this.append(chunk.subarray(LENGTH_PREFIX_BYTES));
  }

  private append(bytes: Uint8Array): Buffer | null {
    const payload = this.payload!;
    if (this.received + bytes.length > payload.length) {
      this.payload = null;
      throw new FramingError(
        `a datagram ran past the end of its message (${this.received + bytes.length} of ${payload.length} bytes)`,
      );
    }
    payload.set(bytes, this.received);
    this.received += bytes.length;
    if (this.received < payload.length) return null;
    this.payload = null;
    return payload;
  }
}
