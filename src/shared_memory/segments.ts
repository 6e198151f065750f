// The segments of a stats region and the bump allocator over them. Blocks are never freed
// (names, slot chunks and value blocks live as long as the region); structures that churn,
// like host slots, reuse their own blocks. Any process may allocate: the cursor of the newest
// segment moves with one atomic add, and the process that finds it full creates the next
// segment under the grow lock. Each process maps a segment the first time an address names it.

import {
  align,
  DEFAULT_SEGMENT_BYTES,
  HeaderField,
  MAX_SEGMENTS,
  SEGMENT_ENTRY_WORDS,
  SEGMENT_TABLE_OFFSET,
  SegmentField,
} from './region_layout';
import type { SharedMemorySource } from './shared_memory_source';
import { ContentionObserver, withSpinLock } from './spin_lock';

const SEGMENT_UNIT = 2 ** 32;
/** One allocation's ceiling: offsets within a segment stay well inside 32 bits. */
const MAX_SEGMENT_BYTES = 1 << 30;

/** The region cannot grow: a segment table or memory limit, named in the message. */
export class StatsMemoryError extends Error {}

/** A block's place: segment * 2^32 + byte offset; 0 is no block. */
export type Address = number;

export function segmentOf(address: Address): number {
  return Math.floor(address / SEGMENT_UNIT);
}

export function offsetOf(address: Address): number {
  return address % SEGMENT_UNIT;
}

interface Views {
  readonly i32: Int32Array;
  readonly u32: Uint32Array;
  readonly f64: Float64Array;
  readonly u8: Uint8Array;
  /** The same bytes as a Buffer: its UTF-8 decoding is several times faster than a TextDecoder's. */
  readonly bytes: Buffer;
}

export class Segments {
  private readonly views: (Views | undefined)[] = [];
  /** Waits for other processes' structural changes are reported here (--enable-mutex-tracing). */
  onContention: ContentionObserver | null = null;

  constructor(
    private readonly memory: SharedMemorySource,
    readonly rootName: string,
    private readonly root: Int32Array,
    private readonly pid: number,
    private readonly segmentBytes = DEFAULT_SEGMENT_BYTES,
  ) {}

  segmentName(n: number): string {
    return `${this.rootName}.${n}`;
  }

  get count(): number {
    return Atomics.load(this.root, HeaderField.SegmentCount);
  }

  /** Where the next block would start: it moves at every allocation, so readers can tell blocks were added. */
  get allocationMark(): number {
    const n = this.count;
    return n === 0 ? 0 : n * SEGMENT_UNIT + (Atomics.load(this.root, this.index(n, SegmentField.Cursor)) >>> 0);
  }

  /** Bytes handed out so far, and bytes the segments reserve. */
  usage(): { used: number; reserved: number } {
    let used = 0;
    let reserved = 0;
    for (let n = 1; n <= this.count; n++) {
      const size = this.entry(n, SegmentField.Size);
      reserved += size;
      used += Math.min(size, this.entry(n, SegmentField.Cursor));
    }
    return { used, reserved };
  }

  i32(address: Address): Int32Array {
    return this.map(segmentOf(address)).i32;
  }

  u32(address: Address): Uint32Array {
    return this.map(segmentOf(address)).u32;
  }

  f64(address: Address): Float64Array {
    return this.map(segmentOf(address)).f64;
  }

  u8(address: Address): Uint8Array {
    return this.map(segmentOf(address)).u8;
  }

  /** Segment `n`'s bytes. */
  segmentU8(n: number): Uint8Array {
    return this.map(n).u8;
  }

  /** The UTF-8 text of `length` bytes at `address`. */
  utf8(address: Address, length: number): string {
    const start = offsetOf(address);
    return this.map(segmentOf(address)).bytes.toString('utf8', start, start + length);
  }

  /** A zero-filled block of at least `bytes`, 8-byte aligned. */
  alloc(bytes: number): Address {
    const size = align(bytes, 8);
    if (size > MAX_SEGMENT_BYTES) throw new StatsMemoryError(`stats block of ${size} bytes exceeds the ${MAX_SEGMENT_BYTES}-byte segment limit`);
    for (;;) {
      const n = this.count;
      if (n > 0) {
        const offset = Atomics.add(this.root, this.index(n, SegmentField.Cursor), size) >>> 0;
        // A segment is as big as its mapping: no need to read its size from the table.
        if (offset + size <= this.map(n).u8.length) return n * SEGMENT_UNIT + offset;
      }
      this.grow(n, size);
    }
  }

  /** Reads an address stored as [offset, segment] at `index`; 0 when none is published. */
  static read(words: Int32Array, index: number): Address {
    const segment = Atomics.load(words, index + 1);
    return segment <= 0 ? 0 : segment * SEGMENT_UNIT + (words[index]! >>> 0);
  }

  static publish(words: Int32Array, index: number, address: Address): void {
    words[index] = offsetOf(address);
    Atomics.store(words, index + 1, segmentOf(address));
  }

  /**
   * The block at `index`, allocating it on first use. Two processes may race: the first to
   * claim the word allocates, the other waits the few stores it takes.
   */
  readOrAllocate(words: Int32Array, index: number, bytes: number): Address {
    for (let spins = 0; ; spins++) {
      const segment = Atomics.load(words, index + 1);
      if (segment > 0) {
        if (spins > 0) this.onContention?.(spins);
        return segment * SEGMENT_UNIT + (words[index]! >>> 0);
      }
      if (segment === 0 && Atomics.compareExchange(words, index + 1, 0, -1) === 0) {
        let address: Address;
        try {
          address = this.alloc(bytes);
        } catch (e) {
          Atomics.store(words, index + 1, 0);
          throw e;
        }
        Segments.publish(words, index, address);
        return address;
      }
    }
  }

  /** Unlinks every segment (the root is the caller's). */
  unlinkAll(): void {
    for (let n = 1; n <= this.count; n++) this.memory.unlink(this.segmentName(n));
  }

  private grow(seen: number, need: number): void {
    withSpinLock(this.root, HeaderField.GrowLock, this.pid, this.onContention, () => {
      if (this.count !== seen) return;
      const n = seen + 1;
      if (n > MAX_SEGMENTS) {
        throw new StatsMemoryError(`stats region is at its limit of ${MAX_SEGMENTS} segments`);
      }
      const bytes = Math.max(this.segmentBytes, align(need, 4096));
      const buffer = this.createSegment(this.segmentName(n), bytes);
      this.adopt(n, buffer);
      this.root[this.index(n, SegmentField.Size)] = bytes;
      this.root[this.index(n, SegmentField.Cursor)] = 0;
      Atomics.store(this.root, HeaderField.SegmentCount, n);
    });
  }

  /** A segment left by a region that crashed under the same name is replaced. */
  private createSegment(name: string, bytes: number): ArrayBuffer {
    try {
      return this.memory.create(name, bytes);
    } catch (e) {
      if ((e as { code?: string }).code !== 'EEXIST') throw e;
      this.memory.unlink(name);
      return this.memory.create(name, bytes);
    }
  }

  private map(n: number): Views {
    return this.views[n] ?? this.adopt(n, this.memory.open(this.segmentName(n)));
  }

  private adopt(n: number, buffer: ArrayBuffer): Views {
    const views = {
      i32: new Int32Array(buffer),
      u32: new Uint32Array(buffer),
      f64: new Float64Array(buffer),
      u8: new Uint8Array(buffer),
      bytes: Buffer.from(buffer),
    };
    this.views[n] = views;
    return views;
  }

  private index(n: number, field: SegmentField): number {
    return SEGMENT_TABLE_OFFSET + (n - 1) * SEGMENT_ENTRY_WORDS + field;
  }

  private entry(n: number, field: SegmentField): number {
    return Atomics.load(this.root, this.index(n, field)) >>> 0;
  }
}
