// One writer's arrays for one histogram, recorded into as a worker does, for the tests of the
// merge (the store keeps the same in the stats region).

import { BUCKET_COUNT, bucketIndex } from '../../src/stats/histogram_buckets';
import type { WriterHistogram } from '../../src/stats/histogram_merger';

export class HistogramWriter implements WriterHistogram {
  readonly buckets = new Uint32Array(BUCKET_COUNT);
  sum = 0;

  record(...values: number[]): this {
    for (const v of values) {
      this.buckets[bucketIndex(v)]!++;
      this.sum += v;
    }
    return this;
  }

  /** What the store does when this writer's process is gone: its counts move to `into`. */
  foldInto(into: HistogramWriter): void {
    for (let i = 0; i < BUCKET_COUNT; i++) into.buckets[i]! += this.buckets[i]!;
    into.sum += this.sum;
    this.buckets.fill(0);
    this.sum = 0;
  }
}
