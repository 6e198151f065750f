// One response body gzipped as it passes, chunk by chunk, synchronously: each chunk comes out
// whole and flushed to a byte boundary (zlib's Z_SYNC_FLUSH, as Envoy's compressor flushes every
// chunk), the end adds the last block and the gzip trailer. node:zlib's streams answer later, on
// its thread pool, so each chunk is deflated on its own with the window the stream has so far as
// its dictionary: back-references reach into earlier chunks as in one zlib stream, and the
// client inflates the concatenation as one.

import * as zlib from 'node:zlib';
import type { GzipCompressionConfig } from '../../config/model';

/** RFC 1952 member header: deflate, no flags, no time, OS Unix (as zlib writes it). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
/** An empty fixed-Huffman block with BFINAL set: what Z_FINISH writes after a flushed stream. */
const LAST_BLOCK = Buffer.from([0x03, 0x00]);
const NO_BYTES = Buffer.alloc(0);

/** The zlib options of a configuration, made once per filter. */
export function deflateOptions(config: GzipCompressionConfig): zlib.ZlibOptions {
  return {
    level: config.level,
    memLevel: config.memoryLevel,
    windowBits: config.windowBits,
    strategy: config.strategy,
    chunkSize: config.chunkSize,
    finishFlush: zlib.constants.Z_SYNC_FLUSH,
  };
}

export class GzipStream {
  /** The last input bytes, up to the window size: the next chunk's dictionary. */
  private window = NO_BYTES;
  private crc = 0;
  private size = 0;
  private started = false;

  /** @param options deflateOptions of the configuration */
  constructor(
    private readonly options: zlib.ZlibOptions,
    private readonly windowSize: number,
  ) {}

  /** `chunk` compressed and flushed; the first output starts with the gzip header. */
  compress(chunk: Buffer): Buffer {
    const window = this.window;
    const deflated = zlib.deflateRawSync(chunk, window.length === 0 ? this.options : { ...this.options, dictionary: window });
    this.crc = zlib.crc32(chunk, this.crc);
    this.size += chunk.length;
    this.slide(chunk);
    if (this.started) return deflated;
    this.started = true;
    return Buffer.concat([GZIP_HEADER, deflated]);
  }

  /** The end of the member: the last block and the trailer (CRC-32 and length modulo 2^32), after the header when nothing came. */
  finish(): Buffer {
    const trailer = Buffer.allocUnsafe(8);
    trailer.writeUInt32LE(this.crc >>> 0, 0);
    trailer.writeUInt32LE(this.size % 0x1_0000_0000, 4);
    const end = this.started ? [LAST_BLOCK, trailer] : [GZIP_HEADER, LAST_BLOCK, trailer];
    this.started = true;
    return Buffer.concat(end);
  }

  private slide(chunk: Buffer): void {
    const size = this.windowSize;
    if (chunk.length >= size) {
      // A copy, so that the window does not keep a large chunk alive.
      this.window = Buffer.from(chunk.subarray(chunk.length - size));
      return;
    }
    const kept = Math.min(this.window.length, size - chunk.length);
    this.window = Buffer.concat([this.window.subarray(this.window.length - kept), chunk]);
  }
}
