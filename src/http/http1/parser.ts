// An incremental HTTP/1.1 message parser: finds message heads, then delivers bodies as they
// arrive (content-length, chunked, or until close) without buffering them. Body chunks are
// views into the input buffers, never copies. Requests and responses differ only in how a
// head is read, which the subclasses implement.

import { CodecError } from './codec_error';
import { BODY_CHUNKED, BODY_UNTIL_CLOSE, type MessageHead } from './message_head';

export interface ParserCallbacks<H extends MessageHead> {
  onMessageHead(head: H): void;
  onMessageBody(chunk: Buffer): void;
  onMessageComplete(): void;
}

/** Envoy's default max_request_headers_kb (and max_response_headers_kb): 60 KiB. */
export const MAX_HEAD_BYTES = 60 * 1024;
const MAX_CHUNK_LINE_BYTES = 4096;
const MAX_CHUNK_SIZE_DIGITS = 13;

const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');
const CR = 0x0d;
const LF = 0x0a;
const HEX = /^[0-9a-fA-F]+$/;

const enum State {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  UntilClose,
}

export abstract class Http1Parser<H extends MessageHead> {
  private state = State.Head;
  /** Bytes left in a content-length body or in the current chunk. */
  private remaining = 0;
  private trailerBytes = 0;
  /** Input not yet consumed: an incomplete line, or everything after a pause. */
  private buffered: Buffer | null = null;
  private paused = false;

  constructor(protected readonly callbacks: ParserCallbacks<H>) {}

  /**
   * Parses one head (start line and header lines, each ending with CRLF), reports it through
   * the callbacks and returns its body length (see MessageHead.bodyLength), or null for an
   * interim (1xx) response that is to be skipped.
   */
  protected abstract headComplete(text: string): number | null;

  /** Bytes received and not yet delivered (pipelined messages held back by a pause). */
  get bufferedBytes(): number {
    return this.buffered === null ? 0 : this.buffered.length;
  }

  /** True between messages: nothing of a next message has been parsed yet. */
  get idle(): boolean {
    return this.state === State.Head && this.buffered === null;
  }

  /** Parses `data`; throws CodecError on malformed input. */
  execute(data: Buffer): void {
    if (this.buffered !== null) {
      data = Buffer.concat([this.buffered, data]);
      this.buffered = null;
    }
    const length = data.length;
    let pos = 0;
    while (pos < length) {
      if (this.paused) {
        this.buffered = data.subarray(pos);
        return;
      }
      switch (this.state) {
        case State.Head: {
          const next = this.readHead(data, pos);
          if (next < 0) return this.hold(data, pos, MAX_HEAD_BYTES, 431, 'http1.headers_too_large');
          pos = next;
          break;
        }
        case State.Length:
        case State.ChunkData: {
          const n = Math.min(this.remaining, length - pos);
          this.remaining -= n;
          this.callbacks.onMessageBody(pos === 0 && n === length ? data : data.subarray(pos, pos + n));
          pos += n;
          if (this.remaining === 0) {
            if (this.state === State.Length) this.completeMessage();
            else this.state = State.ChunkDataEnd;
          }
          break;
        }
        case State.UntilClose:
          this.callbacks.onMessageBody(pos === 0 ? data : data.subarray(pos));
          pos = length;
          break;
        case State.ChunkSize: {
          const eol = data.indexOf(LF, pos);
          if (eol < 0) return this.hold(data, pos, MAX_CHUNK_LINE_BYTES, 400, 'http1.invalid_chunk_size');
          this.readChunkSize(data, pos, eol);
          pos = eol + 1;
          break;
        }
        case State.ChunkDataEnd:
          if (length - pos < 2) return this.hold(data, pos, 2, 400, 'http1.codec_error');
          if (data[pos] !== CR || data[pos + 1] !== LF) throw new CodecError(400, 'http1.codec_error');
          pos += 2;
          this.state = State.ChunkSize;
          break;
        case State.Trailers: {
          const eol = data.indexOf(LF, pos);
          if (eol < 0) return this.hold(data, pos, MAX_HEAD_BYTES - this.trailerBytes, 431, 'http1.headers_too_large');
          if (eol === pos || data[eol - 1] !== CR) throw new CodecError(400, 'http1.codec_error');
          // Trailers are read and dropped, as Envoy does for HTTP/1 by default.
          this.trailerBytes += eol + 1 - pos;
          if (this.trailerBytes > MAX_HEAD_BYTES) throw new CodecError(431, 'http1.headers_too_large');
          const blank = eol === pos + 1;
          pos = eol + 1;
          if (blank) this.completeMessage();
          break;
        }
      }
    }
  }

  /** Stops delivering messages; input keeps being accepted and is held until resume(). */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    const held = this.buffered;
    if (held === null) return;
    this.buffered = null;
    this.execute(held);
  }

  /**
   * The peer closed its side. Completes a body that runs until close; throws CodecError when
   * a message was cut short.
   */
  finish(): void {
    if (this.state === State.UntilClose) {
      this.completeMessage();
    } else if (this.state !== State.Head || (this.buffered !== null && !this.paused)) {
      throw new CodecError(400, 'http1.premature_close');
    }
  }

  private readHead(data: Buffer, pos: number): number {
    // Empty lines before a start line are tolerated (RFC 7230 section 3.5).
    while (pos < data.length && (data[pos] === CR || data[pos] === LF)) pos++;
    if (pos === data.length) return pos;
    const end = data.indexOf(CRLF_CRLF, pos);
    if (end < 0) return -1;
    if (end + 4 - pos > MAX_HEAD_BYTES) throw new CodecError(431, 'http1.headers_too_large');
    const bodyLength = this.headComplete(data.toString('latin1', pos, end + 2));
    if (bodyLength === null) return end + 4;
    if (bodyLength === 0) {
      this.completeMessage();
    } else if (bodyLength === BODY_CHUNKED) {
      this.state = State.ChunkSize;
    } else if (bodyLength === BODY_UNTIL_CLOSE) {
      this.state = State.UntilClose;
    } else {
      this.state = State.Length;
      this.remaining = bodyLength;
    }
    return end + 4;
  }

  private readChunkSize(data: Buffer, pos: number, eol: number): void {
    if (eol === pos || data[eol - 1] !== CR) throw new CodecError(400, 'http1.invalid_chunk_size');
    const line = data.toString('latin1', pos, eol - 1);
    const extension = line.indexOf(';');
    const digits = (extension < 0 ? line : line.slice(0, extension)).trimEnd();
    if (digits.length > MAX_CHUNK_SIZE_DIGITS || !HEX.test(digits)) {
      throw new CodecError(400, 'http1.invalid_chunk_size');
    }
    const size = parseInt(digits, 16);
    if (size === 0) {
      this.state = State.Trailers;
      this.trailerBytes = 0;
    } else {
      this.state = State.ChunkData;
      this.remaining = size;
    }
  }

  /** Keeps an incomplete line for the next execute(), within `limit` bytes. */
  private hold(data: Buffer, pos: number, limit: number, status: number, details: string): void {
    if (data.length - pos > limit) throw new CodecError(status, details);
    this.buffered = data.subarray(pos);
  }

  private completeMessage(): void {
    this.state = State.Head;
    this.callbacks.onMessageComplete();
  }
}
