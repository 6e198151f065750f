// Envoy's recent stat-name lookups (/stats/recentlookups): every lookup of a stat by its name
// string counts in the total; which names, and how often, is remembered only while enabled (a
// capacity above 0), for the `capacity` names looked up last. Pure.

/** What /stats/recentlookups/enable sets, as in Envoy. */
export const RECENT_LOOKUPS_CAPACITY = 100;

/** One process's lookups: the names remembered with their counts, and the total. */
export interface ProcessLookups {
  readonly names: readonly (readonly [string, number])[];
  readonly total: number;
}

export class RecentLookups {
  private limit = 0;
  private lookups = 0;
  /** Name -> count, least recently looked up first (a Map keeps insertion order). */
  private readonly counts = new Map<string, number>();

  get capacity(): number {
    return this.limit;
  }

  /** Lookups since the last clear, remembered or not. */
  get total(): number {
    return this.lookups;
  }

  lookup(name: string): void {
    this.lookups++;
    if (this.limit > 0) this.remember(name);
  }

  /** `count` lookups at once; `names` lists them, and is only called while enabled. */
  lookupAll(count: number, names: () => Iterable<string>): void {
    this.lookups += count;
    if (this.limit > 0) for (const name of names()) this.remember(name);
  }

  /** 0 disables; a smaller capacity forgets the least recent names. */
  setCapacity(capacity: number): void {
    this.limit = capacity;
    this.evictTo(capacity);
  }

  clear(): void {
    this.counts.clear();
    this.lookups = 0;
  }

  /** The remembered names and their counts, least recent first, and the total. */
  snapshot(): ProcessLookups {
    return { names: [...this.counts], total: this.lookups };
  }

  private remember(name: string): void {
    const count = this.counts.get(name) ?? 0;
    // Re-inserted, so it becomes the most recent.
    this.counts.delete(name);
    this.evictTo(this.limit - 1);
    this.counts.set(name, count + 1);
  }

  private evictTo(size: number): void {
    for (const name of this.counts.keys()) {
      if (this.counts.size <= size) return;
      this.counts.delete(name);
    }
  }
}
