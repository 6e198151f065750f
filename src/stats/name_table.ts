// Insert-only, lock-free hash table from stat name to slot, living in the shared region.
// Any process may add a name: a slot is claimed with a compare-and-swap on its state word,
// filled, then published; a process that meets a slot being filled waits for it.

import { SlotField, SlotFlag, SlotState, StatKind } from './region_layout';
import { StatsRegion } from './region';

export class StatNameError extends Error {}

export interface SlotInfo {
  readonly slot: number;
  readonly name: string;
  readonly kind: StatKind;
  readonly flags: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** FNV-1a over UTF-8 bytes: cheap and good enough for linear probing. */
function hashBytes(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i]!;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class NameTable {
  private readonly mask: number;
  /** Told of each wait on a slot another process is filling, in spin iterations (--enable-mutex-tracing). */
  onContention: ((spins: number) => void) | null = null;

  constructor(private readonly region: StatsRegion) {
    this.mask = region.layout.maxStats - 1;
  }

  /** Finds or creates the slot of `name`; a name already present keeps its original kind. */
  intern(name: string, kind: StatKind, flags: number): number {
    const bytes = encoder.encode(name);
    const { nameBytes, maxStats } = this.region.layout;
    if (bytes.length === 0 || bytes.length > nameBytes) {
      throw new StatNameError(`stat name must be 1..${nameBytes} bytes: '${name.slice(0, 80)}'`);
    }
    const meta = this.region.meta;
    let slot = hashBytes(bytes) & this.mask;
    for (let probes = 0; probes < maxStats; probes++, slot = (slot + 1) & this.mask) {
      const stateIndex = slot * 2 + SlotField.State;
      let state = Atomics.load(meta, stateIndex);
      if (state === SlotState.Empty) {
        state = Atomics.compareExchange(meta, stateIndex, SlotState.Empty, SlotState.Claiming);
        if (state === SlotState.Empty) {
          this.region.names.set(bytes, slot * nameBytes);
          meta[slot * 2 + SlotField.Info] = kind | (flags << 8) | (bytes.length << 16);
          Atomics.store(meta, stateIndex, SlotState.Ready);
          return slot;
        }
      }
      // Another process is writing this slot's name: it finishes within a few stores.
      let spins = 0;
      for (; state === SlotState.Claiming; spins++) state = Atomics.load(meta, stateIndex);
      if (spins > 0) this.onContention?.(spins);
      if (this.nameEquals(slot, bytes)) return slot;
    }
    throw new StatNameError(`stats region is full (${maxStats} names); cannot add '${name}'`);
  }

  private nameEquals(slot: number, bytes: Uint8Array): boolean {
    const info = this.region.meta[slot * 2 + SlotField.Info]!;
    if (info >>> 16 !== bytes.length) return false;
    const base = slot * this.region.layout.nameBytes;
    const names = this.region.names;
    for (let i = 0; i < bytes.length; i++) if (names[base + i] !== bytes[i]) return false;
    return true;
  }

  /** Every published slot, in slot order. */
  entries(): SlotInfo[] {
    const { maxStats, nameBytes } = this.region.layout;
    const meta = this.region.meta;
    const out: SlotInfo[] = [];
    for (let slot = 0; slot < maxStats; slot++) {
      if (Atomics.load(meta, slot * 2 + SlotField.State) !== SlotState.Ready) continue;
      const info = meta[slot * 2 + SlotField.Info]!;
      const len = info >>> 16;
      const base = slot * nameBytes;
      out.push({
        slot,
        name: decoder.decode(this.region.names.subarray(base, base + len)),
        kind: (info & 0xff) as StatKind,
        flags: (info >>> 8) & 0xff,
      });
    }
    return out;
  }
}

export function isHidden(info: SlotInfo): boolean {
  return (info.flags & SlotFlag.Hidden) !== 0;
}
