// The name order of stat slots, which /stats lists. 10,000 clusters have 950,000 names, and a
// sort comparing whole names makes ~20 comparisons per name. But a cluster's stats are declared
// together, so slots come in runs with the same `cluster.<X>.`, and each cluster's run has the
// same names after it as other clusters' runs. So a name is cut after its second dot into a
// head and a rest: each run is put in order by its rests (the order found for an earlier run,
// when its rests are the same), and the runs by their heads.
//
// That is the name order: a head with two dots ends at the second one, so it is no other head's
// proper prefix, and a head without is the whole name. Two names compare as their heads do,
// and with the same head, as their rests do.

/** The decoded name of a slot. */
export type NameOf = (slot: number) => string;

/** The slots of one head, in name order. */
interface Run {
  readonly head: string;
  readonly slots: number[];
}

/** The order of a run, kept for later ones: its rests by position, and its positions in name order. */
interface RunOrder {
  readonly rests: readonly string[];
  readonly order: readonly number[];
}

const DOT = '.';

/** Where a name's head ends: after its second dot, or -1 when it has fewer (the head is the name). */
function headEnd(name: string): number {
  const first = name.indexOf(DOT);
  if (first < 0) return -1;
  const second = name.indexOf(DOT, first + 1);
  return second < 0 ? -1 : second + 1;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * `slots` in the order of their names (UTF-16 code units, as `<` compares). A generator that
 * yields after each `batch` names or so, so that a caller can spread the work over turns of the
 * event loop; the last step orders the runs (a few milliseconds per 10,000 clusters).
 */
export function* sortByName(slots: readonly number[], nameOf: NameOf, batch: number): Generator<void, number[]> {
  const runs: Run[] = [];
  // Orders found so far, by the rest of a run's first name. A cluster's stats are declared in a
  // few groups (two writers' interleave), so runs alternate between a few sets of rests.
  const orders = new Map<string, RunOrder>();
  let sinceYield = 0;
  for (let start = 0; start < slots.length; ) {
    const first = nameOf(slots[start]!);
    const cut = headEnd(first);
    const head = cut < 0 ? first : first.slice(0, cut);
    const names = [first];
    // A run is cut at `batch` names, so that one head's names are sorted over several steps.
    for (let i = start + 1; cut >= 0 && i < slots.length && names.length < batch; i++) {
      const name = nameOf(slots[i]!);
      if (!name.startsWith(head)) break;
      names.push(name);
    }
    const end = start + names.length;
    let ordered = [slots[start]!];
    if (names.length > 1) {
      const firstRest = first.slice(cut);
      let known = orders.get(firstRest);
      if (known === undefined || !sameRests(names, cut, known.rests)) {
        known = runOrder(names, cut);
        orders.set(firstRest, known);
      }
      ordered = new Array(names.length);
      for (let k = 0; k < ordered.length; k++) ordered[k] = slots[start + known.order[k]!]!;
    }
    runs.push({ head, slots: ordered });
    sinceYield += end - start;
    start = end;
    if (sinceYield >= batch && start < slots.length) {
      sinceYield = 0;
      yield;
    }
  }
  // Stable: runs of one head (a cluster's stats declared at different times) stay in slot order.
  runs.sort((a, b) => compare(a.head, b.head));
  const out: number[] = [];
  for (let r = 0; r < runs.length; ) {
    let merged: ArrayLike<number> = runs[r]!.slots;
    let next = r + 1;
    for (; next < runs.length && runs[next]!.head === runs[r]!.head; next++) merged = mergeByName(merged, runs[next]!.slots, nameOf);
    for (let k = 0; k < merged.length; k++) out.push(merged[k]!);
    r = next;
  }
  return out;
}

/** sortByName() in one step. */
export function sortedByName(slots: readonly number[], nameOf: NameOf): number[] {
  const steps = sortByName(slots, nameOf, Infinity);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/** Whether the names past `cut` are `rests`, position by position, without cutting them. */
function sameRests(names: readonly string[], cut: number, rests: readonly string[]): boolean {
  if (names.length !== rests.length) return false;
  for (let k = 0; k < names.length; k++) {
    const name = names[k]!;
    const rest = rests[k]!;
    if (name.length !== cut + rest.length || !name.endsWith(rest)) return false;
  }
  return true;
}

/** The positions of one head's names in name order; with one head, whole names compare as rests do. */
function runOrder(names: readonly string[], cut: number): RunOrder {
  const order = names.map((_, k) => k).sort((a, b) => compare(names[a]!, names[b]!));
  return { rests: names.map((name) => name.slice(cut)), order };
}

/** Two lists of slots in name order, merged; on equal names, `a`'s first. */
export function mergeByName(a: ArrayLike<number>, b: ArrayLike<number>, nameOf: NameOf): Int32Array {
  const out = new Int32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = compare(nameOf(a[i]!), nameOf(b[j]!)) <= 0 ? a[i++]! : b[j++]!;
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}
