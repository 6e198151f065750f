// The supervisor's merge of every histogram across its writers, at each stats_flush_interval
// (Envoy's ParentHistogram merge): the samples since the previous flush (interval) and since start
// (cumulative). Pure: the caller reads the stats region and hands over views of it.
//
// It works from totals: per bucket, the sum over the writers listed now. When a writer exits, the
// store folds its counts into another writer's, which leaves every total as it was; so a fold needs
// no notice, and nothing is lost or counted twice. Histograms are never reset (reset_counters
// leaves them alone), so totals only grow, except that a writer's Uint32 counts wrap (a fold adds
// modulo 2^32 as well): once a histogram has been merged, its totals are compared modulo 2^32, as
// signed 32-bit differences, which is exact while one bucket gains fewer than 2^31 samples between
// two flushes. A total that drops (a writer left out before its fold is done) counts nothing until
// it is back where it was.
//
// A histogram keeps merged counts only once it has samples, and then only its occupied buckets.
// The first flush's interval holds whatever the writers held already (after a hot restart, the
// parent's samples): flush once before workers start so that later intervals are true.

import { BUCKET_COUNT } from './histogram_buckets';
import { BucketSummary } from './histogram_summary';
import type { HistogramSummary } from './sample';

/** One writer's part of one histogram, as it is now in the stats region. */
export interface WriterHistogram {
  /** The writer's count per bucket (BUCKET_COUNT of them). */
  readonly buckets: Uint32Array;
  /** The sum of the values it recorded. */
  readonly sum: number;
}

/** A histogram by its stable id (its slot), with the parts of the writers that hold it now. */
export type HistogramWriters = readonly [id: number, writers: readonly WriterHistogram[]];

interface Merged {
  cumulative: BucketSummary;
  interval: BucketSummary;
  /** The flush that produced `interval`: older ones are not the last interval. */
  intervalFlush: number;
}

export class HistogramMerger {
  private readonly merged = new Map<number, Merged>();
  private readonly empty = new BucketSummary(new Uint16Array(0), new Float64Array(0), 0);
  private flushes = 0;
  // Scratch for one histogram's flush; summaries keep trimmed copies of the occupied buckets.
  private readonly totals = new Float64Array(BUCKET_COUNT);
  private readonly addedIndices = new Uint16Array(BUCKET_COUNT);
  private readonly addedCounts = new Float64Array(BUCKET_COUNT);
  private readonly totalIndices = new Uint16Array(BUCKET_COUNT);
  private readonly totalCounts = new Float64Array(BUCKET_COUNT);

  /** Ends an interval: merges every histogram's writers as they are now. One left out gained nothing. */
  flush(histograms: Iterable<HistogramWriters>): void {
    this.flushes++;
    for (const [id, writers] of histograms) this.flushHistogram(id, writers);
  }

  /** The samples of the last flush interval; null when there were none. */
  interval(id: number): HistogramSummary | null {
    const merged = this.merged.get(id);
    return merged !== undefined && merged.intervalFlush === this.flushes ? merged.interval : null;
  }

  /** Every sample up to the last flush. */
  cumulative(id: number): HistogramSummary {
    return this.merged.get(id)?.cumulative ?? this.empty;
  }

  private flushHistogram(id: number, writers: readonly WriterHistogram[]): void {
    // No writer holds samples of it (folds keep the supervisor's): nothing to gain, nothing to read.
    if (writers.length === 0) return;
    const views = writers.map((w) => w.buckets);
    for (const view of views) {
      if (view.length !== BUCKET_COUNT) throw new RangeError(`histogram ${id}: expected ${BUCKET_COUNT} buckets, got ${view.length}`);
    }
    // Writer by writer, each view read in order (bucket by bucket across writers is far slower).
    const totals = this.totals.fill(0);
    for (const view of views) for (let i = 0; i < BUCKET_COUNT; i++) totals[i] += view[i]!;
    const before = this.merged.get(id);
    const previous = before?.cumulative ?? this.empty;
    let next = 0;
    let added = 0;
    let occupied = 0;
    for (let i = 0; i < BUCKET_COUNT; i++) {
      const total = totals[i]!;
      const had = previous.indices[next] === i ? previous.counts[next++]! : 0;
      // Before its first merge a histogram has no total to compare with: it gained them all.
      const gained = before === undefined ? total : Math.max(0, (total - had) | 0);
      if (gained > 0) {
        this.addedIndices[added] = i;
        this.addedCounts[added++] = gained;
      }
      if (had + gained > 0) {
        this.totalIndices[occupied] = i;
        this.totalCounts[occupied++] = had + gained;
      }
    }
    if (added === 0) return;
    const sum = writers.reduce((s, w) => s + w.sum, 0);
    this.merged.set(id, {
      cumulative: new BucketSummary(this.totalIndices.slice(0, occupied), this.totalCounts.slice(0, occupied), sum),
      interval: new BucketSummary(this.addedIndices.slice(0, added), this.addedCounts.slice(0, added), sum - previous.sum),
      intervalFlush: this.flushes,
    });
  }
}
