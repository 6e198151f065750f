// The name order of stat slots, which /stats lists: the byte order of their UTF-8 names, as
// Envoy sorts them. Names are compared where they lie, in the region, never decoded: 10,000
// clusters have 950,000 names. A sort comparing whole names makes ~20 comparisons per name,
// but a cluster's stats are declared together, so slots come in runs with the same
// `cluster.<X>.`, and each cluster's run has the same names after it as other clusters' runs.
// So a name is cut after its second dot into a head and a rest: each run is put in order by
// its rests (the order found for an earlier run, when its rests are the same), and the runs by
// their heads.
//
// That is the name order: a head with two dots ends at the second one, so it is no other head's
// proper prefix, and a head without is the whole name. Two names compare as their heads do,
// and with the same head, as their rests do.

import type { NameBytes } from './name_bytes';

/**
 * The slots of one head, in name order; `cut` is where the head ends in each of their names.
 * Runs of one `shape` have the same rests in the same order (null: not known to be alike).
 */
interface Run {
  /** The position of its first name in the list being sorted, and where its head ends there. */
  readonly first: number;
  readonly cut: number;
  readonly slots: ArrayLike<number>;
  readonly shape: object | null;
}

/**
 * How two runs of one head interleave in name order, by their shapes: the positions where the
 * merge takes from the second. A cluster's stats declared at two times make two runs, and every
 * cluster's pair interleaves alike. Its own identity is the merged run's shape.
 */
interface Interleave {
  readonly fromB: Uint8Array;
}

/**
 * Told of each run of names with one head that the sort puts in order: its slots in name order,
 * where their heads end, and its shape. Runs of one shape (the same object) have the same names
 * past the head, position by position: the sort compared them byte by byte.
 */
export type RunListener = (names: NameBytes, slots: Int32Array, cut: number, shape: object) => void;

const DOT = 0x2e;
const FNV_OFFSET = 0x811c9dc5 | 0;

/**
 * The order of a run, kept for later ones: where the run lies in the list being sorted, and
 * its names' positions in name order.
 */
interface RunOrder {
  readonly start: number;
  readonly length: number;
  readonly cut: number;
  readonly order: readonly number[];
}

/**
 * Where the names of a list of slots lie, by position: each read from the table once, then
 * compared with typed-array reads (a sort compares each name with two others at least).
 */
class Spans {
  /** The arrays names lie in (the region's segments: a few), and which one by position. */
  private readonly distinct: Uint8Array[] = [];
  private readonly arrayAt: Int32Array;
  readonly starts: Int32Array;
  readonly lengths: Int32Array;
  private read = 0;

  constructor(
    private readonly slots: ArrayLike<number>,
    private readonly names: NameBytes,
  ) {
    this.arrayAt = new Int32Array(slots.length);
    this.starts = new Int32Array(slots.length);
    this.lengths = new Int32Array(slots.length);
  }

  /** Reads the names of the positions below `to` (in order, as the sort goes). */
  readTo(to: number): void {
    let last = this.read === 0 ? -1 : this.arrayAt[this.read - 1]!;
    for (let p = this.read; p < to; p++) {
      const slot = this.slots[p]!;
      const array = this.names.nameArray(slot);
      // Names interned together lie together: mostly the array of the name before.
      if (last < 0 || this.distinct[last] !== array) {
        last = this.distinct.indexOf(array);
        if (last < 0) last = this.distinct.push(array) - 1;
      }
      this.arrayAt[p] = last;
      this.starts[p] = this.names.nameStart(slot);
      this.lengths[p] = this.names.nameLength(slot);
    }
    this.read = Math.max(this.read, to);
  }

  /** The array the name at `p` lies in. */
  array(p: number): Uint8Array {
    return this.distinct[this.arrayAt[p]!]!;
  }

  /** Where the name at `p` has its head end: after its second dot, or -1 when it has fewer (the head is the name). */
  headEnd(p: number): number {
    const bytes = this.array(p);
    const start = this.starts[p]!;
    const end = start + this.lengths[p]!;
    let dots = 0;
    for (let i = start; i < end; i++) if (bytes[i] === DOT && ++dots === 2) return i + 1 - start;
    return -1;
  }

  /** Whether the name at `p` has the head of the one at `first` (its first `cut` bytes), compared from the end, where heads differ. */
  sameHead(first: number, p: number, cut: number): boolean {
    if (this.lengths[p]! < cut) return false;
    const x = this.array(first);
    const y = this.array(p);
    const xs = this.starts[first]!;
    const ys = this.starts[p]!;
    for (let i = cut - 1; i >= 0; i--) if (x[xs + i] !== y[ys + i]) return false;
    return true;
  }

  /** FNV-1a of the name at `p` past `cut`: the key of the orders kept for runs. */
  restHash(p: number, cut: number): number {
    const bytes = this.array(p);
    const end = this.starts[p]! + this.lengths[p]!;
    let h = FNV_OFFSET;
    for (let i = this.starts[p]! + cut; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
    return h;
  }

  /** Whether the names of the run at [start, start + length) past `cut` are those of `known`'s past its cut, in order. */
  sameRests(start: number, length: number, cut: number, known: RunOrder): boolean {
    if (length !== known.length) return false;
    for (let k = 0; k < length; k++) {
      const p = start + k;
      const q = known.start + k;
      const n = this.lengths[p]! - cut;
      if (n !== this.lengths[q]! - known.cut) return false;
      const x = this.array(p);
      const y = this.array(q);
      const xs = this.starts[p]! + cut;
      const ys = this.starts[q]! + known.cut;
      for (let i = 0; i < n; i++) if (x[xs + i] !== y[ys + i]) return false;
    }
    return true;
  }

  /** The positions of one head's names in name order: with one head, names compare as their rests do. */
  runOrder(start: number, length: number, cut: number): RunOrder {
    const order = Array.from({ length }, (_, k) => k).sort((a, b) => this.compare(start + a, this.lengths[start + a]!, start + b, this.lengths[start + b]!, cut));
    return { start, length, cut, order };
  }

  /** The byte order of the names at `p` and `q` past their first `cut` bytes, up to `pEnd` and `qEnd`. */
  compare(p: number, pEnd: number, q: number, qEnd: number, cut: number): number {
    const x = this.array(p);
    const y = this.array(q);
    const xs = this.starts[p]!;
    const ys = this.starts[q]!;
    const n = Math.min(pEnd, qEnd);
    for (let i = cut; i < n; i++) {
      const d = x[xs + i]! - y[ys + i]!;
      if (d !== 0) return d;
    }
    return pEnd - qEnd;
  }
}

/** The byte order of `a`'s name from `fromA` to `toA` and `b`'s from `fromB` to `toB`. */
function compareBytes(names: NameBytes, a: number, fromA: number, toA: number, b: number, fromB: number, toB: number): number {
  const x = names.nameArray(a);
  const y = names.nameArray(b);
  const xs = names.nameStart(a) + fromA;
  const ys = names.nameStart(b) + fromB;
  const n = Math.min(toA - fromA, toB - fromB);
  for (let i = 0; i < n; i++) {
    const d = x[xs + i]! - y[ys + i]!;
    if (d !== 0) return d;
  }
  return toA - fromA - (toB - fromB);
}

/** The byte order of two slots' whole names. */
export function compareNames(names: NameBytes, a: number, b: number): number {
  return compareBytes(names, a, 0, names.nameLength(a), b, 0, names.nameLength(b));
}

/**
 * `slots` in the order of their names. A generator that yields after each `batch` names or so,
 * so that a caller can spread the work over turns of the event loop; the last step orders the
 * runs (a few milliseconds per 10,000 clusters).
 */
export function* sortByName(slots: ArrayLike<number>, names: NameBytes, batch: number, onRun: RunListener | null = null): Generator<void, Int32Array> {
  const runs: Run[] = [];
  // Orders found so far, by a hash of the rest of a run's first name. A cluster's stats are
  // declared in a few groups (two writers interleave), so runs alternate between a few sets of rests.
  const orders = new Map<number, RunOrder>();
  const spans = new Spans(slots, names);
  let sinceYield = 0;
  for (let start = 0; start < slots.length; ) {
    // A run is cut at `batch` names, so that one head's names are sorted over several steps.
    const limit = Math.min(slots.length, start + batch);
    spans.readTo(limit);
    const cut = spans.headEnd(start);
    let end = start + 1;
    while (cut >= 0 && end < limit && spans.sameHead(start, end, cut)) end++;
    if (end - start === 1) {
      runs.push({ first: start, cut, slots: [slots[start]!], shape: null });
    } else {
      const key = spans.restHash(start, cut);
      let known = orders.get(key);
      if (known === undefined || !spans.sameRests(start, end - start, cut, known)) {
        known = spans.runOrder(start, end - start, cut);
        orders.set(key, known);
      }
      const ordered = new Int32Array(end - start);
      for (let k = 0; k < ordered.length; k++) ordered[k] = slots[start + known.order[k]!]!;
      runs.push({ first: start, cut, slots: ordered, shape: known });
      onRun?.(names, ordered, cut, known);
    }
    sinceYield += end - start;
    start = end;
    if (sinceYield >= batch && start < slots.length) {
      sinceYield = 0;
      yield;
    }
  }
  const headOf = (run: Run) => (run.cut < 0 ? spans.lengths[run.first]! : run.cut);
  const compareHeads = (a: Run, b: Run) => spans.compare(a.first, headOf(a), b.first, headOf(b), 0);
  // Stable: runs of one head (a cluster's stats declared at different times) stay in slot order.
  runs.sort(compareHeads);
  const interleaves = new Map<object, Map<object, Interleave>>();
  const out = new Int32Array(slots.length);
  let at = 0;
  for (let r = 0; r < runs.length; ) {
    let merged = runs[r]!;
    let next = r + 1;
    for (; next < runs.length && compareHeads(runs[r]!, runs[next]!) === 0; next++) merged = mergeRuns(merged, runs[next]!, names, interleaves);
    out.set(merged.slots, at);
    at += merged.slots.length;
    r = next;
  }
  return out;
}

/** Two runs of one head as one, interleaved as an earlier pair of the same shapes was. */
function mergeRuns(a: Run, b: Run, names: NameBytes, interleaves: Map<object, Map<object, Interleave>>): Run {
  if (a.shape === null || b.shape === null) return { ...a, slots: mergeByName(a.slots, b.slots, names), shape: null };
  let byB = interleaves.get(a.shape);
  if (byB === undefined) {
    byB = new Map();
    interleaves.set(a.shape, byB);
  }
  let known = byB.get(b.shape);
  if (known === undefined) {
    known = { fromB: interleave(a.slots, b.slots, names) };
    byB.set(b.shape, known);
  }
  return { ...a, slots: applyInterleave(a.slots, b.slots, known.fromB), shape: known };
}

/** sortByName() in one step. */
export function sortedByName(slots: ArrayLike<number>, names: NameBytes, onRun: RunListener | null = null): Int32Array {
  const steps = sortByName(slots, names, Infinity, onRun);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/** Two lists of slots in name order, merged; on equal names, `a`'s first. */
export function mergeByName(a: ArrayLike<number>, b: ArrayLike<number>, names: NameBytes): Int32Array {
  return applyInterleave(a, b, interleave(a, b, names));
}

/** Where the merge of two lists in name order takes from `b` (1) rather than `a` (0). */
function interleave(a: ArrayLike<number>, b: ArrayLike<number>, names: NameBytes): Uint8Array {
  const fromB = new Uint8Array(a.length + b.length);
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (compareNames(names, a[i]!, b[j]!) <= 0) i++;
    else fromB[i + j++] = 1;
  }
  if (i === a.length) fromB.fill(1, i + j);
  return fromB;
}

function applyInterleave(a: ArrayLike<number>, b: ArrayLike<number>, fromB: Uint8Array): Int32Array {
  const out = new Int32Array(fromB.length);
  let i = 0;
  let j = 0;
  for (let k = 0; k < out.length; k++) out[k] = fromB[k] === 1 ? b[j++]! : a[i++]!;
  return out;
}
