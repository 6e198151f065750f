// Counts shared by every writer of the region (a circuit breaker's open connections, counted
// by all workers together), updated with Atomics. Beside the totals, each writer keeps its own
// share in its column, so that the supervisor can take a dead writer's share back out of the
// totals: a worker that crashes with requests open must not hold the limit down for ever.
//
// Block layout, in Int32 words: `count` totals, then MAX_COLUMNS shares of `count` words each.

import { MAX_COLUMNS } from '../shared_memory/region_layout';

export function sharedCountsBytes(count: number): number {
  return count * (1 + MAX_COLUMNS) * 4;
}

export class SharedCounts {
  private readonly share: number;

  constructor(
    private readonly words: Int32Array,
    private readonly base: number,
    readonly count: number,
    column: number,
  ) {
    this.share = base + count * (1 + column);
  }

  /** The total of count `i` over every writer. */
  get(i: number): number {
    return Atomics.load(this.words, this.base + i);
  }

  /** Adds `n` (negative to take away) to count `i`, as this writer's share. */
  add(i: number, n: number): void {
    Atomics.add(this.words, this.base + i, n);
    Atomics.add(this.words, this.share + i, n);
  }

  /**
   * Adds `n` to count `i` outside every writer's share: for a count that one process owns and
   * zeroes when it starts (reset), of which no dead writer's share must be taken back.
   */
  addUnowned(i: number, n: number): void {
    Atomics.add(this.words, this.base + i, n);
  }

  /** Sets count `i` to 0: its owner (see addUnowned) starts afresh. */
  reset(i: number): void {
    Atomics.store(this.words, this.base + i, 0);
  }

  /**
   * Adds 1 to count `i` unless that would take it past `max`: the check and the add are one
   * step, so two workers racing for the last unit cannot both take it.
   */
  tryIncrement(i: number, max: number): boolean {
    const words = this.words;
    const at = this.base + i;
    for (let current = Atomics.load(words, at); current < max; current = Atomics.load(words, at)) {
      if (Atomics.compareExchange(words, at, current, current + 1) === current) {
        Atomics.add(words, this.share + i, 1);
        return true;
      }
    }
    return false;
  }
}

/** Takes `column`'s shares out of the totals of the block at `words[base]`, and zeroes them. */
export function releaseShares(words: Int32Array, base: number, count: number, column: number): void {
  const share = base + count * (1 + column);
  for (let i = 0; i < count; i++) {
    const mine = Atomics.exchange(words, share + i, 0);
    if (mine !== 0) Atomics.sub(words, base + i, mine);
  }
}
