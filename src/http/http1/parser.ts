// An incremental HTTP/1.1 message parser: finds message heads, then delivers bodies as they
// arrive (content-length, chunked, or until close) without buffering them. Body chunks are
// views into the input buffers, never copies. Requests and responses differ only in how a
// head is read, which the subclasses implement.

import { CodecError } from './codec_error';
import { CHUNK_EXTENSIONS } from './grammar';
import { trailerField } from './header_fields';
import { BODY_CHUNKED, BODY_UNTIL_CLOSE, type MessageHead } from '../message';

export interface ParserCallbacks<H extends MessageHead> {
  onMessageHead(head: H): void;
  onMessageBody(chunk: Buffer): void;
  /** @param trailers a chunked message's trailers, [name, value, ...], when they are kept and there were some */
  onMessageComplete(trailers: string[] | null): void;
}

/** Envoy's default max_request_headers_kb (and max_response_headers_kb): 60 KiB. */
export const MAX_HEAD_BYTES = 60 * 1024;
const MAX_CHUNK_LINE_BYTES = 4096;
const MAX_CHUNK_SIZE_DIGITS = 13;
/** Empty lines tolerated before a start line (RFC 9112 section 2.2 asks for at least one). */
const MAX_EMPTY_LINES = 2;

const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');
const CR = 0x0d;
const LF = 0x0a;

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
  private emptyLines = 0;
  /**
   * Input not yet consumed, as it arrived: an incomplete head or line, or everything after a
   * pause. Kept as a list and joined once when it can be parsed, so a head sent a few bytes
   * at a time costs linear work, not quadratic.
   */
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** How many bytes of CRLF CRLF an incomplete head ends with. */
  private heldMatch = 0;
  /** Where, in the held head, the search for its end resumes. */
  private searchFrom = 0;
  private paused = false;
  private scanned = 0;
  /** The current message's trailers, when kept. */
  private trailers: string[] | null = null;

  /** @param keepTrailers deliver a chunked message's trailers (enable_trailers); else they are checked and dropped, as Envoy does by default */
  constructor(
    protected readonly callbacks: ParserCallbacks<H>,
    private readonly keepTrailers = false,
  ) {}

  /**
   * Parses one head (start line and header lines, each ending with CRLF), reports it through
   * the callbacks and returns its body length (see MessageHead.bodyLength), or null for an
   * interim (1xx) response that is to be skipped.
   */
  protected abstract headComplete(text: string): number | null;

  /** Bytes received and not yet delivered (pipelined messages held back by a pause). */
  get bufferedBytes(): number {
    return this.heldBytes;
  }

  /** True between messages: nothing of a next message has been parsed yet. */
  get idle(): boolean {
    return this.state === State.Head && this.heldBytes === 0;
  }

  /** Bytes examined looking for the end of heads, so a test can check that work is linear. */
  get scannedBytes(): number {
    return this.scanned;
  }

  /** Parses `data`; throws CodecError on malformed input. */
  execute(data: Buffer): void {
    if (this.heldBytes > 0) {
      if (this.paused || !this.completesHeld(data)) {
        this.hold(data, 0);
        return;
      }
      this.held.push(data);
      data = Buffer.concat(this.held, this.heldBytes + data.length);
      this.held = [];
      this.heldBytes = 0;
    }
    const length = data.length;
    let pos = 0;
    while (pos < length) {
      if (this.paused) return this.hold(data, pos);
      switch (this.state) {
        case State.Head:
          pos = this.readHead(data, pos);
          break;
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
          if (eol < 0) return this.hold(data, pos);
          this.readChunkSize(data, pos, eol);
          pos = eol + 1;
          break;
        }
        case State.ChunkDataEnd:
          if (length - pos < 2) return this.hold(data, pos);
          if (data[pos] !== CR || data[pos + 1] !== LF) throw new CodecError(400, 'http1.codec_error');
          pos += 2;
          this.state = State.ChunkSize;
          break;
        case State.Trailers: {
          const eol = data.indexOf(LF, pos);
          if (eol < 0) return this.hold(data, pos);
          if (eol === pos || data[eol - 1] !== CR) throw new CodecError(400, 'http1.codec_error');
          this.trailerBytes += eol + 1 - pos;
          if (this.trailerBytes > MAX_HEAD_BYTES) throw new CodecError(431, 'http1.headers_too_large');
          const blank = eol === pos + 1;
          if (!blank) {
            const [name, value] = trailerField(data.toString('latin1', pos, eol - 1));
            if (this.keepTrailers) (this.trailers ??= []).push(name, value);
          }
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
    if (this.heldBytes === 0) return;
    const held = Buffer.concat(this.held, this.heldBytes);
    this.held = [];
    this.heldBytes = 0;
    this.execute(held);
  }

  /**
   * The peer closed its side. Completes a body that runs until close; throws CodecError when
   * a message was cut short.
   */
  finish(): void {
    if (this.state === State.UntilClose) {
      this.completeMessage();
    } else if (this.state !== State.Head || (this.heldBytes > 0 && !this.paused)) {
      throw new CodecError(400, 'http1.premature_close');
    }
  }

  /** Parses the head starting at `pos`, or holds it until it is complete; the next position. */
  private readHead(data: Buffer, pos: number): number {
    pos = this.skipEmptyLines(data, pos);
    if (pos === data.length) return pos;
    if (pos < 0) {
      // A CR at the end of the input: an empty line, or an error, once the next byte is known.
      this.hold(data, data.length - 1);
      return data.length;
    }
    // A head held from earlier reads starts at 0, and was searched up to searchFrom.
    const from = Math.max(pos, this.searchFrom - (CRLF_CRLF.length - 1));
    this.searchFrom = 0;
    const end = data.indexOf(CRLF_CRLF, from);
    this.scanned += (end < 0 ? data.length : end + 4) - from;
    if (end < 0) {
      this.hold(data, pos);
      return data.length;
    }
    if (end + 4 - pos > MAX_HEAD_BYTES) throw new CodecError(431, 'http1.headers_too_large');
    this.emptyLines = 0;
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

  /**
   * Skips the empty lines (CRLF) a start line may follow; -1 when the input ends in the middle
   * of one. Anything else that is not a start line is an error.
   */
  private skipEmptyLines(data: Buffer, pos: number): number {
    while (pos < data.length && data[pos] === CR) {
      if (pos + 1 === data.length) return -1;
      if (data[pos + 1] !== LF || ++this.emptyLines > MAX_EMPTY_LINES) throw new CodecError(400, 'http1.codec_error');
      pos += 2;
    }
    return pos;
  }

  /** chunk-size [ chunk-ext ] CRLF, the line at data[pos, eol]. */
  private readChunkSize(data: Buffer, pos: number, eol: number): void {
    const end = eol - 1;
    if (end < pos || data[end] !== CR) throw new CodecError(400, 'http1.invalid_chunk_size');
    let size = 0;
    let i = pos;
    for (; i < end; i++) {
      const digit = hexDigit(data[i]);
      if (digit < 0) break;
      size = size * 16 + digit;
    }
    if (i === pos || i - pos > MAX_CHUNK_SIZE_DIGITS) throw new CodecError(400, 'http1.invalid_chunk_size');
    // Extensions are checked, then dropped.
    if (i < end && !CHUNK_EXTENSIONS.test(data.toString('latin1', i, end))) {
      throw new CodecError(400, 'http1.invalid_chunk_size');
    }
    if (size === 0) {
      this.state = State.Trailers;
      this.trailerBytes = 0;
    } else {
      this.state = State.ChunkData;
      this.remaining = size;
    }
  }

  /**
   * Whether `data` may complete what is held, so that joining and parsing them is worth it.
   * Only `data` is searched: what is held was searched when it arrived.
   */
  private completesHeld(data: Buffer): boolean {
    switch (this.state) {
      case State.Head:
        // A lone CR is the start of an empty line before a head: the next byte settles it.
        if (this.heldBytes === 1 && this.held[0]![0] === CR) return true;
        this.scanned += data.length;
        return crlfCrlfMatch(this.heldMatch, data.subarray(0, 3)) === CRLF_CRLF.length || data.indexOf(CRLF_CRLF) >= 0;
      case State.ChunkSize:
      case State.Trailers:
        return data.indexOf(LF) >= 0;
      default:
        return this.heldBytes + data.length >= 2;
    }
  }

  /** Keeps data[pos..] for the next execute(): an incomplete head or line, within its limit. */
  private hold(data: Buffer, pos: number): void {
    const kept = pos === 0 ? data : data.subarray(pos);
    const head = this.state === State.Head && !this.paused;
    if (head) {
      // The match state depends only on the last three bytes.
      const prior = this.heldBytes === 0 || kept.length >= 3 ? 0 : this.heldMatch;
      this.heldMatch = crlfCrlfMatch(prior, kept.subarray(-3));
    }
    if (!this.paused) this.checkHoldLimit(this.heldBytes + kept.length);
    this.held.push(kept);
    this.heldBytes += kept.length;
    // All of a held head has been searched; input held during a pause has not.
    if (head) this.searchFrom = this.heldBytes;
  }

  private checkHoldLimit(bytes: number): void {
    switch (this.state) {
      case State.Head:
        if (bytes > MAX_HEAD_BYTES) throw new CodecError(431, 'http1.headers_too_large');
        break;
      case State.Trailers:
        if (this.trailerBytes + bytes > MAX_HEAD_BYTES) throw new CodecError(431, 'http1.headers_too_large');
        break;
      case State.ChunkSize:
        if (bytes > MAX_CHUNK_LINE_BYTES) throw new CodecError(400, 'http1.invalid_chunk_size');
        break;
      default:
        break;
    }
  }

  private completeMessage(): void {
    this.state = State.Head;
    const trailers = this.trailers;
    this.trailers = null;
    this.callbacks.onMessageComplete(trailers);
  }
}

/** Extends `match`, how many bytes of CRLF CRLF the input so far ends with, over `data`. */
function crlfCrlfMatch(match: number, data: Buffer): number {
  for (let i = 0; i < data.length && match < CRLF_CRLF.length; i++) {
    const byte = data[i];
    match = byte === CRLF_CRLF[match] ? match + 1 : byte === CR ? 1 : 0;
  }
  return match;
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}
