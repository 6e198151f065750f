// Where a /stats renderer gathers its output between two yields. A renderer is a generator
// that the admin server resumes one chunk at a time, turning to the supervisor's other work in
// between; so a chunk is due after ~128 KiB, or after a bounded number of stats looked at,
// whichever comes first (a filter that rejects everything still pauses). An empty chunk is
// such a pause: nothing to write, but the loop gets its turn.
//
// Output is written as bytes into the chunk: 10,000 clusters are a million lines, and a string
// per line (then a string per chunk, then its encoding) is most of what a render would cost.

import type { NameBytes } from '../../stats/name_bytes';

const CHUNK_BYTES = 128 * 1024;
/** Room past a due chunk for the stat that makes it due (a histogram's lines), without growing it. */
const CHUNK_ROOM = CHUNK_BYTES + 32 * 1024;
/** A few microseconds per stat at worst (a first Prometheus render): ~10 ms between turns. */
const STATS_PER_CHUNK = 4096;
/** The longest safe integer, `-9007199254740991`, is 17 bytes. */
const MAX_INTEGER_BYTES = 17;
/** Longer byte strings are copied with one call rather than byte by byte. */
const SHORT_COPY_BYTES = 12;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export class ChunkBuffer {
  private out = Buffer.allocUnsafeSlow(CHUNK_ROOM);
  private at = 0;
  private stats = 0;

  /** Appends `text` as UTF-8: ASCII byte by byte, anything else through the encoder. */
  text(text: string): void {
    const length = text.length;
    this.reserve(length);
    const out = this.out;
    let at = this.at;
    for (let i = 0; i < length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) return this.encode(text);
      out[at++] = c;
    }
    this.at = at;
  }

  /** Appends one byte. */
  byte(c: number): void {
    this.reserve(1);
    this.out[this.at++] = c;
  }

  /** Appends bytes already encoded. */
  bytes(bytes: Uint8Array): void {
    const length = bytes.length;
    this.reserve(length);
    const out = this.out;
    let at = this.at;
    // A copy call costs about what 10 bytes copied one by one do: short ones stay in the loop.
    if (length > SHORT_COPY_BYTES) {
      out.set(bytes, at);
      at += length;
    } else for (let i = 0; i < length; i++) out[at++] = bytes[i]!;
    this.at = at;
  }

  /** Appends the name of `key`, as the bytes it already is. */
  name(names: NameBytes, key: number): void {
    const bytes = names.nameArray(key);
    const start = names.nameStart(key);
    const length = names.nameLength(key);
    this.reserve(length);
    const out = this.out;
    let at = this.at;
    if (length > SHORT_COPY_BYTES) {
      out.set(bytes.subarray(start, start + length), at);
      at += length;
    } else for (let i = 0; i < length; i++) out[at++] = bytes[start + i]!;
    this.at = at;
  }

  /**
   * Appends the name of `key` as a JSON string, quotes included, when none of its bytes needs
   * escaping (UTF-8 past ASCII does not); false, with nothing written, when one does.
   */
  jsonName(names: NameBytes, key: number): boolean {
    const bytes = names.nameArray(key);
    const start = names.nameStart(key);
    const length = names.nameLength(key);
    this.reserve(length + 2);
    const out = this.out;
    let at = this.at;
    out[at++] = QUOTE;
    for (let i = start; i < start + length; i++) {
      const c = bytes[i]!;
      if (c < 0x20 || c === QUOTE || c === BACKSLASH) return false;
      out[at++] = c;
    }
    out[at++] = QUOTE;
    this.at = at;
    return true;
  }

  /** Appends `text` as a JSON string, quotes included. */
  jsonString(text: string): void {
    const length = text.length;
    this.reserve(length + 2);
    const out = this.out;
    let at = this.at;
    out[at++] = QUOTE;
    for (let i = 0; i < length; i++) {
      const c = text.charCodeAt(i);
      // Stat names rarely need escaping or encoding: those few go through JSON.stringify.
      if (c >= 0x80 || c < 0x20 || c === QUOTE || c === BACKSLASH) return this.encode(JSON.stringify(text));
      out[at++] = c;
    }
    out[at++] = QUOTE;
    this.at = at;
  }

  /** Appends a number as JavaScript prints it (`String(value)`), integers without a string. */
  number(value: number): void {
    if (!Number.isSafeInteger(value)) return this.text(String(value));
    this.reserve(MAX_INTEGER_BYTES);
    const out = this.out;
    let at = this.at;
    if (value < 0) {
      out[at++] = 0x2d;
      value = -value;
    }
    let end = at + 1;
    for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) end++;
    for (let p = end - 1; p >= at; p--) {
      const next = Math.floor(value / 10);
      out[p] = 0x30 + (value - next * 10);
      value = next;
    }
    this.at = end;
  }

  /** Counts one stat looked at; true when the caller should yield take(). */
  step(): boolean {
    return ++this.stats >= STATS_PER_CHUNK || this.at >= CHUNK_BYTES;
  }

  /** The bytes gathered since the last take (possibly none). */
  take(): Buffer {
    this.stats = 0;
    if (this.at === 0) return EMPTY_CHUNK;
    const chunk = this.out.subarray(0, this.at);
    // The chunk is the socket's until written: the next one goes into new memory.
    this.out = Buffer.allocUnsafeSlow(CHUNK_ROOM);
    this.at = 0;
    return chunk;
  }

  /** Writes `text` at the current position through the UTF-8 encoder (up to 3 bytes a unit). */
  private encode(text: string): void {
    this.reserve(text.length * 3);
    this.at += this.out.write(text, this.at, 'utf8');
  }

  private reserve(length: number): void {
    if (this.at + length <= this.out.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.out.length * 2, this.at + length));
    this.out.copy(grown, 0, 0, this.at);
    this.out = grown;
  }
}

/** A chunk with nothing to write: a pause, the event loop's turn (see the top of this file). */
export const EMPTY_CHUNK = Buffer.alloc(0);
