// Gathers the small pieces one batch of input makes a connection write (a message head, a
// small body, chunk framing) into one socket write: Node's cost is per write call far more
// than per byte. Pieces are latin1 strings, which carry any bytes unchanged; larger bodies
// are written as the Buffers they are, never copied, in one writev with the text before them.

import type { WatermarkWriter } from './watermark_writer';

/** Bodies up to this size join the pending text; copying them is cheaper than another write. */
const SMALL_BODY_BYTES = 1024;

export class CoalescingWriter {
  private pending = '';

  constructor(private readonly writer: WatermarkWriter) {}

  /** Queues latin1 text. */
  text(text: string): void {
    this.pending += text;
  }

  /** Queues a small body chunk, or sends what is pending and then the chunk. True when over the limit. */
  bytes(chunk: Buffer): boolean {
    if (chunk.length <= SMALL_BODY_BYTES) {
      this.pending += chunk.toString('latin1');
      return false;
    }
    if (this.pending === '') return this.writer.write(chunk);
    const text = this.pending;
    this.pending = '';
    return this.writer.writePair(text, chunk);
  }

  /** Sends what is pending. True when the socket is over its buffer limit. */
  flush(): boolean {
    if (this.pending === '') return false;
    const text = this.pending;
    this.pending = '';
    return this.writer.write(text);
  }

  /** Drops what is pending (the connection is being reset). */
  discard(): void {
    this.pending = '';
  }
}
