// Finds the HTTP/2 frame headers (RFC 9113 section 4.1) in a byte stream cut into chunks anyhow,
// without reading payloads: the flood limits count frames by type, flags and payload length as
// Envoy's codec does from nghttp2's callbacks. Pure.

/** Frame types the limits tell apart. */
export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const FrameFlag = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8 } as const;

export const FRAME_HEADER_SIZE = 9;

/** Told of each frame as its header (and, for a padded DATA or HEADERS frame, its pad length) is read. */
export interface FrameVisitor {
  /**
   * `padding`: the bytes of padding, the Pad Length field included (nghttp2's padlen), 0 when
   * not padded. Returns false to stop scanning (the connection is being closed).
   */
  onFrame(type: number, flags: number, length: number, streamId: number, padding: number): boolean;
}

export class FrameScanner {
  /** The header being read, when it straddles chunks. */
  private readonly header = Buffer.alloc(FRAME_HEADER_SIZE + 1);
  private headerBytes = 0;
  /** Payload bytes of the current frame still to skip. */
  private skip = 0;

  /** `offset`: where frames start in the first chunk (after the client's connection preface). */
  constructor(private offset = 0) {}

  /** Returns the number of frames whose header was complete in `chunk`; stops early when the visitor says so. */
  scan(chunk: Buffer, visitor: FrameVisitor): number {
    let at = 0;
    let frames = 0;
    if (this.offset > 0) {
      at = Math.min(this.offset, chunk.length);
      this.offset -= at;
    }
    while (at < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - at);
        this.skip -= n;
        at += n;
        continue;
      }
      // The common case, a whole header in the chunk, is read in place.
      if (this.headerBytes === 0 && chunk.length - at >= FRAME_HEADER_SIZE + 1) {
        const length = (chunk[at] << 16) | (chunk[at + 1] << 8) | chunk[at + 2];
        const type = chunk[at + 3];
        const flags = chunk[at + 4];
        const padded = (flags & FrameFlag.PADDED) !== 0 && (type === FrameType.DATA || type === FrameType.HEADERS) && length > 0;
        const padding = padded ? chunk[at + FRAME_HEADER_SIZE] + 1 : 0;
        at += FRAME_HEADER_SIZE;
        this.skip = length;
        frames++;
        if (!visitor.onFrame(type, flags, length, chunk.readUInt32BE(at - 4) & 0x7fffffff, padding)) return frames;
        continue;
      }
      const n = Math.min(this.wanted() - this.headerBytes, chunk.length - at);
      chunk.copy(this.header, this.headerBytes, at, at + n);
      this.headerBytes += n;
      at += n;
      if (this.headerBytes < this.wanted()) continue;
      const header = this.header;
      const length = header.readUIntBE(0, 3);
      const padding = this.headerBytes > FRAME_HEADER_SIZE ? header[FRAME_HEADER_SIZE] + 1 : 0;
      // The pad length byte, when read, is the payload's first.
      this.skip = length - (this.headerBytes - FRAME_HEADER_SIZE);
      this.headerBytes = 0;
      frames++;
      if (!visitor.onFrame(header[3], header[4], length, header.readUInt32BE(5) & 0x7fffffff, padding)) return frames;
    }
    return frames;
  }

  /** No frame is partly scanned: the next byte starts one. */
  atFrameBoundary(): boolean {
    return this.skip === 0 && this.headerBytes === 0;
  }

  /** Bytes of the straddling header to gather: one more for a padded frame's pad length. */
  private wanted(): number {
    if (this.headerBytes < FRAME_HEADER_SIZE) return FRAME_HEADER_SIZE;
    const header = this.header;
    const type = header[3];
    const padded = (header[4] & FrameFlag.PADDED) !== 0 && (type === FrameType.DATA || type === FrameType.HEADERS) && header.readUIntBE(0, 3) > 0;
    return padded ? FRAME_HEADER_SIZE + 1 : FRAME_HEADER_SIZE;
  }
}
