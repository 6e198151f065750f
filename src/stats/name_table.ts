// The stats section: slots numbered from 0, in chunks of 1024 allocated as the count grows,
// and a chained hash index from name to slot. Insert-only and lock-free: a process takes the
// next slot with one atomic add, writes the name, then links the slot at the head of its
// bucket with a compare-and-swap; if another process linked the same name first, its slot
// wins and ours is marked dead, never listed.

import {
  CHUNK_BASELINE,
  CHUNK_BLOCK_BYTES,
  CHUNK_COLUMN_BLOCKS,
  CHUNK_HEADER_WORDS,
  CHUNK_SHIFT,
  CHUNK_SLOTS,
  MAX_CHUNKS,
  NAME_BUCKETS,
  SectionKind,
  SLOT_WORDS,
  SlotField,
  SlotState,
  StatKind,
  STATS_BUCKETS_OFFSET,
  STATS_CHUNK_DIR_OFFSET,
  StatsField,
  VALUE_BLOCK_BYTES,
} from '../shared_memory/region_layout';
import type { NameBytes } from './name_bytes';
import type { SectionView, StatsRegion } from '../shared_memory/region';
import { Address, offsetOf, Segments, StatsMemoryError } from '../shared_memory/segments';

export class StatNameError extends Error {}

/** Names declared together: `<prefix><scope><name>` for each of `names`, of one kind. */
export interface StatGroup {
  readonly scope: string;
  readonly names: readonly string[];
  readonly kind: StatKind;
  readonly flags: number;
}

/** Where a slot's record lives: `words[index + SlotField.X]`. */
export interface SlotRecord {
  readonly words: Int32Array;
  readonly index: number;
}

/** Names are bytes in the region; a longer one is a mistake, not a stat. */
export const MAX_NAME_BYTES = 4096;

const FNV_OFFSET = 0x811c9dc5 | 0;

/** FNV-1a over UTF-8 bytes, continued from `h` at `from`: cheap and good enough for chaining. */
function hashBytes(bytes: Uint8Array, length: number, h: number, from: number): number {
  for (let i = from; i < length; i++) {
    h ^= bytes[i]!;
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

export class NameTable implements NameBytes {
  private readonly section: SectionView;
  private readonly segments: Segments;
  /** Chunk blocks this process has resolved (they never move). */
  private readonly chunks: Address[] = [];
  /** Each resolved chunk's words and the index of its first slot record (the lookup's hot path). */
  private readonly chunkWords: Int32Array[] = [];
  private readonly chunkFirst: number[] = [];
  /** Decoded names by slot: each is read from the region once per process. */
  private readonly decoded: (string | undefined)[] = [];
  private readonly encoder = new TextEncoder();
  /** The name being interned, encoded (a UTF-16 unit is at most 3 UTF-8 bytes). */
  private readonly scratch = new Uint8Array(MAX_NAME_BYTES * 3);

  constructor(readonly region: StatsRegion) {
    this.section = region.section(SectionKind.Stats);
    this.segments = region.segments;
  }

  /** Slots handed out so far (some may still be being written, or dead). */
  get slotCount(): number {
    return Atomics.load(this.section.view, this.section.base + StatsField.SlotCount);
  }

  /** Finds or creates the slot of `name`; a name already present keeps its original kind. */
  intern(name: string, kind: StatKind, flags: number): number {
    const length = this.encoder.encodeInto(name, this.scratch).written;
    if (length === 0 || length > MAX_NAME_BYTES) {
      throw new StatNameError(`stat name must be 1..${MAX_NAME_BYTES} bytes: '${name.slice(0, 80)}'`);
    }
    return this.internScratch(length, hashBytes(this.scratch, length, FNV_OFFSET, 0), kind, flags);
  }

  /** The slot of `name`, or -1 when no process has interned it. */
  lookup(name: string): number {
    const length = this.encoder.encodeInto(name, this.scratch).written;
    if (length === 0 || length > MAX_NAME_BYTES) return -1;
    const hash = hashBytes(this.scratch, length, FNV_OFFSET, 0);
    return this.find(Atomics.load(this.section.view, this.bucketIndex(hash)), 0, length, hash);
  }

  /**
   * Interns every name of `groups` under `prefix`: a cluster's stat set declares ~100 names,
   * whose prefix is encoded and hashed once. The names not present yet take their slots and
   * bytes in one atomic step each: writers declaring at once otherwise contend on those two
   * shared words for every name. So a cluster's names also lie in one run of slots, which is
   * what makes sorting them cheap (see name_order.ts).
   * @returns the slot of each name, groups and names in order
   */
  internAll(prefix: string, groups: readonly StatGroup[]): number[] {
    const prefixLength = this.encoder.encodeInto(prefix, this.scratch).written;
    const prefixHash = hashBytes(this.scratch, prefixLength, FNV_OFFSET, 0);
    const afterPrefix = this.scratch.subarray(prefixLength);
    const tails: Uint8Array[] = [];
    const missing: { group: number; name: string; length: number; hash: number; head: number; at: number }[] = [];
    const slots: number[] = [];
    let bytes = 0;
    groups.forEach(({ scope, names }, group) => {
      const scopeEnd = prefixLength + this.encoder.encodeInto(scope, afterPrefix).written;
      const scopeHash = hashBytes(this.scratch, scopeEnd, prefixHash, prefixLength);
      const tail = this.scratch.subarray(scopeEnd, MAX_NAME_BYTES * 3);
      tails.push(tail);
      for (const name of names) {
        const length = scopeEnd + this.encoder.encodeInto(name, tail).written;
        if (length === 0 || length > MAX_NAME_BYTES) {
          throw new StatNameError(`stat name must be 1..${MAX_NAME_BYTES} bytes: '${(prefix + scope + name).slice(0, 80)}'`);
        }
        const hash = hashBytes(this.scratch, length, scopeHash, scopeEnd);
        const head = Atomics.load(this.section.view, this.bucketIndex(hash));
        const existing = this.find(head, 0, length, hash);
        slots.push(existing);
        if (existing >= 0) continue;
        missing.push({ group, name, length, hash, head, at: slots.length - 1 });
        bytes += length;
      }
    });
    if (missing.length === 0) return slots;
    const first = Atomics.add(this.section.view, this.section.base + StatsField.SlotCount, missing.length);
    let nameAddress = this.segments.alloc(bytes);
    let scoped = -1;
    missing.forEach(({ group, name, length, hash, head, at }, i) => {
      if (group !== scoped) this.encoder.encodeInto(groups[group]!.scope, afterPrefix);
      scoped = group;
      this.encoder.encodeInto(name, tails[group]!);
      const { kind, flags } = groups[group]!;
      slots[at] = this.link(first + i, nameAddress, length, hash, head, kind, flags);
      nameAddress += length;
    });
    return slots;
  }

  /** Finds or creates the slot of the name in `scratch`. */
  private internScratch(length: number, hash: number, kind: StatKind, flags: number): number {
    const head = Atomics.load(this.section.view, this.bucketIndex(hash));
    const existing = this.find(head, 0, length, hash);
    if (existing >= 0) return existing;
    const slot = Atomics.add(this.section.view, this.section.base + StatsField.SlotCount, 1);
    return this.link(slot, this.segments.alloc(length), length, hash, head, kind, flags);
  }

  /**
   * Writes the name in `scratch` at `nameAddress`, fills `slot`'s record and links it into its
   * bucket, unless another process linked the same name after `head` (the bucket's head when
   * the name was found absent): then that slot is the name's, and ours is dead.
   */
  private link(slot: number, nameAddress: Address, length: number, hash: number, head: number, kind: StatKind, flags: number): number {
    const view = this.section.view;
    const bucket = this.bucketIndex(hash);
    const chunk = this.chunk(slot >>> CHUNK_SHIFT, true);
    const words = this.segments.i32(chunk);
    const index = recordIndex(chunk, slot);
    const arena = this.segments.u8(nameAddress);
    const start = offsetOf(nameAddress);
    for (let i = 0; i < length; i++) arena[start + i] = this.scratch[i]!;
    Segments.publish(words, index + SlotField.NameAddress, nameAddress);
    words[index + SlotField.NameLength] = length;
    words[index + SlotField.Hash] = hash;
    words[index + SlotField.Info] = kind | (flags << 8);
    for (;;) {
      words[index + SlotField.Next] = head;
      const seen = Atomics.compareExchange(view, bucket, head, slot + 1);
      if (seen === head) break;
      const winner = this.find(seen, head, length, hash);
      if (winner >= 0) {
        Atomics.store(words, index + SlotField.State, SlotState.Dead);
        return winner;
      }
      head = seen;
    }
    Atomics.store(words, index + SlotField.State, SlotState.Ready);
    return slot;
  }

  private bucketIndex(hash: number): number {
    return this.section.base + STATS_BUCKETS_OFFSET + ((hash >>> 0) & (NAME_BUCKETS - 1));
  }

  /** The record of `slot`; null when its chunk is not allocated yet (unless `allocate`). */
  record(slot: number): SlotRecord | null {
    const chunk = this.chunk(slot >>> CHUNK_SHIFT);
    if (chunk === 0) return null;
    return { words: this.segments.i32(chunk), index: recordIndex(chunk, slot) };
  }

  /** The chunk block of chunk number `c`, or 0. */
  chunk(c: number, allocate = false): Address {
    const known = this.chunks[c];
    if (known !== undefined) return known;
    if (c >= MAX_CHUNKS) throw new StatsMemoryError(`stats region is at its limit of ${MAX_CHUNKS * CHUNK_SLOTS} stats`);
    const { view, base } = this.section;
    const at = base + STATS_CHUNK_DIR_OFFSET + c * 2;
    const address = allocate ? this.segments.readOrAllocate(view, at, CHUNK_BLOCK_BYTES) : Segments.read(view, at);
    if (address !== 0) {
      this.chunks[c] = address;
      this.chunkWords[c] = this.segments.i32(address);
      this.chunkFirst[c] = offsetOf(address) / 4 + CHUNK_HEADER_WORDS;
    }
    return address;
  }

  /** Column `column`'s value block for chunk `c`; with `allocate`, made on first use. */
  valueBlock(c: number, column: number, allocate: boolean): Address {
    const chunk = this.chunk(c, allocate);
    if (chunk === 0) return 0;
    const words = this.segments.i32(chunk);
    const at = offsetOf(chunk) / 4 + CHUNK_COLUMN_BLOCKS + column * 2;
    return allocate ? this.segments.readOrAllocate(words, at, VALUE_BLOCK_BYTES) : Segments.read(words, at);
  }

  /** Chunk `c`'s reset baselines (counter values at the last /reset_counters). */
  baselineBlock(c: number, allocate: boolean): Address {
    const chunk = this.chunk(c, allocate);
    if (chunk === 0) return 0;
    const words = this.segments.i32(chunk);
    const at = offsetOf(chunk) / 4 + CHUNK_BASELINE;
    return allocate ? this.segments.readOrAllocate(words, at, VALUE_BLOCK_BYTES) : Segments.read(words, at);
  }

  /** Calls `fn` for each published slot from `from` on, in slot order, without decoding names. */
  forEachReady(fn: (slot: number, kind: StatKind) => void, from = 0): void {
    const count = this.slotCount;
    for (let c = from >>> CHUNK_SHIFT; c << CHUNK_SHIFT < count; c++) {
      const chunk = this.chunk(c);
      if (chunk === 0) continue;
      const words = this.segments.i32(chunk);
      const first = offsetOf(chunk) / 4 + CHUNK_HEADER_WORDS;
      const end = Math.min(CHUNK_SLOTS, count - (c << CHUNK_SHIFT));
      for (let i = Math.max(0, from - (c << CHUNK_SHIFT)); i < end; i++) {
        const index = first + i * SLOT_WORDS;
        if (Atomics.load(words, index + SlotField.State) !== SlotState.Ready) continue;
        fn((c << CHUNK_SHIFT) + i, (words[index + SlotField.Info]! & 0xff) as StatKind);
      }
    }
  }

  /**
   * The first slot from `from` below `count` that a process is still writing (or whose chunk it
   * has not allocated yet), or that is published but `unseen` by the caller, who scanned before
   * its writer published it; `count` when there is none.
   */
  firstUnsettled(from: number, count: number, unseen: (slot: number, kind: StatKind) => boolean): number {
    for (let c = from >>> CHUNK_SHIFT; c << CHUNK_SHIFT < count; c++) {
      const base = c << CHUNK_SHIFT;
      if (this.chunk(c) === 0) return Math.max(from, base);
      const words = this.chunkWords[c]!;
      const first = this.chunkFirst[c]!;
      const end = Math.min(CHUNK_SLOTS, count - base);
      for (let i = Math.max(0, from - base); i < end; i++) {
        const index = first + i * SLOT_WORDS;
        const state = Atomics.load(words, index + SlotField.State);
        if (state === SlotState.Empty) return base + i;
        if (state === SlotState.Ready && unseen(base + i, (words[index + SlotField.Info]! & 0xff) as StatKind)) return base + i;
      }
    }
    return count;
  }

  /** The name of a published slot, decoded once per process. */
  name(slot: number): string {
    let name = this.decoded[slot];
    if (name === undefined) {
      const index = this.recordOf(slot);
      name = this.segments.utf8(Segments.read(this.chunkWords[slot >>> CHUNK_SHIFT]!, index + SlotField.NameAddress), this.nameLength(slot));
      // Names are decoded in any order (a filter's): grown densely, the array stays a fast one.
      while (this.decoded.length <= slot) this.decoded.push(undefined);
      this.decoded[slot] = name;
    }
    return name;
  }

  /** NameBytes: the segment holding a published slot's name. */
  nameArray(slot: number): Uint8Array {
    const index = this.recordOf(slot);
    // Written before the slot was published: no atomic read needed.
    return this.segments.segmentU8(this.chunkWords[slot >>> CHUNK_SHIFT]![index + SlotField.NameAddress + 1]!);
  }

  nameStart(slot: number): number {
    const index = this.recordOf(slot);
    return this.chunkWords[slot >>> CHUNK_SHIFT]![index + SlotField.NameAddress]! >>> 0;
  }

  nameLength(slot: number): number {
    const index = this.recordOf(slot);
    return this.chunkWords[slot >>> CHUNK_SHIFT]![index + SlotField.NameLength]!;
  }

  /** The index of a published slot's record in its chunk's words (no record object: sorts call this per name). */
  private recordOf(slot: number): number {
    const c = slot >>> CHUNK_SHIFT;
    if (this.chunkWords[c] === undefined) this.chunk(c);
    return this.chunkFirst[c]! + (slot & (CHUNK_SLOTS - 1)) * SLOT_WORDS;
  }

  /** Walks a bucket's chain from slot+1 `from` until slot+1 `until` for the name in `scratch`. */
  private find(from: number, until: number, length: number, hash: number): number {
    for (let link = from; link !== 0 && link !== until; ) {
      const slot = link - 1;
      // Linked slots were fully written first, so their chunk is published.
      const index = this.recordOf(slot);
      const words = this.chunkWords[slot >>> CHUNK_SHIFT]!;
      if (words[index + SlotField.Hash] === hash && this.nameEquals(words, index, length)) return slot;
      link = words[index + SlotField.Next]!;
    }
    return -1;
  }

  private nameEquals(words: Int32Array, index: number, length: number): boolean {
    if (words[index + SlotField.NameLength] !== length) return false;
    const bytes = this.scratch;
    const address = Segments.read(words, index + SlotField.NameAddress);
    const names = this.segments.u8(address);
    const start = offsetOf(address);
    for (let i = 0; i < length; i++) if (names[start + i] !== bytes[i]) return false;
    return true;
  }
}

function recordIndex(chunk: Address, slot: number): number {
  return offsetOf(chunk) / 4 + CHUNK_HEADER_WORDS + (slot & (CHUNK_SLOTS - 1)) * SLOT_WORDS;
}
