// A HistogramSummary over bucket counts (histogram_buckets.ts) merged across writers: what the
// /stats renderers read for one period of one histogram. Pure and immutable.
//
// The quantile. Values are recorded as integers, so the q-quantile of n samples is the smallest
// recorded v with at least q*n samples <= v: the k-th smallest sample, k = max(1, ceil(q*n)).
// Only bucket counts are kept, so the bucket holding the k-th sample is found exactly and the
// place of the sample in it estimated: the bucket's c samples are taken as spread evenly over its
// integers [lower, upper - 1], each at the centre of an equal share (the j-th at
// lower + (upper - 1 - lower) * (j - 1/2) / c). The smallest and the largest samples may sit
// anywhere in their buckets, so the lowest occupied bucket is taken as occupied from its middle
// and the highest up to its middle; q = 0 and q = 1 answer those middles. countAtOrBelow() counts
// by the same places, a sample being the whole number nearest its place.
//
// Its error. A bucket below 128 holds one integer: quantiles there are exact, so a histogram of
// values below 128 is read exactly (a constant 100 reads 100 at every q). Above, the estimate and
// the true value share a bucket whose integers span under 1/64 of its lower bound: the error is
// below 1/64 (1.6%) at worst (a bucket's samples piled at one edge), below 1/128 (0.8%) at q = 0,
// at q = 1 and for a constant (every quantile reads its bucket's middle). For data smooth at the
// scale of a bucket it stays under 1% (histogram_summary.test.ts measures it). countAtOrBelow()
// is exact for bounds below 128; above, it is off by at most the samples of the bound's bucket.

import { BUCKET_COUNT, bucketLowerBound, bucketUpperBound, MAX_TRACKED_VALUE } from './histogram_buckets';
import type { HistogramSummary } from './sample';

/**
 * q * count in floating point can land a hair above the whole rank it means (0.07 * 100 is
 * 7.000000000000001); a relative slack far below one sample keeps it on the rank.
 */
const RANK_SLACK = 1e-12;

/** The largest integer of a bucket; the last one also holds every value beyond the tracked range. */
function topValue(index: number): number {
  return index === BUCKET_COUNT - 1 ? MAX_TRACKED_VALUE : bucketUpperBound(index) - 1;
}

function middleValue(index: number): number {
  return (bucketLowerBound(index) + topValue(index)) / 2;
}

export class BucketSummary implements HistogramSummary {
  readonly count: number;

  /**
   * @param indices the occupied buckets, ascending
   * @param counts the samples of each, all above zero (whole numbers, beyond 2^32 if need be)
   * @param sum the sum of the recorded values
   */
  constructor(
    readonly indices: Uint16Array,
    readonly counts: Float64Array,
    readonly sum: number,
  ) {
    this.count = counts.reduce((total, c) => total + c, 0);
  }

  /** From one count per bucket (BUCKET_COUNT of them), zeros included. */
  static fromCounts(counts: ArrayLike<number>, sum: number): BucketSummary {
    if (counts.length !== BUCKET_COUNT) throw new RangeError(`expected ${BUCKET_COUNT} bucket counts, got ${counts.length}`);
    const indices: number[] = [];
    for (let i = 0; i < BUCKET_COUNT; i++) if (counts[i]! > 0) indices.push(i);
    return new BucketSummary(Uint16Array.from(indices), Float64Array.from(indices, (i) => counts[i]!), sum);
  }

  quantile(q: number): number {
    if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile ${q} is outside [0, 1]`);
    if (this.count === 0) return NaN;
    const last = this.indices.length - 1;
    if (q === 0) return this.low(0);
    if (q === 1) return this.high(last);
    // Below 1, so the rank is at most count and the walk ends on an occupied bucket.
    const rank = Math.max(1, Math.ceil(q * this.count * (1 - RANK_SLACK)));
    let at = 0;
    let below = 0;
    while (below + this.counts[at]! < rank) below += this.counts[at++]!;
    const low = this.low(at);
    return low + ((this.high(at) - low) * (rank - below - 0.5)) / this.counts[at]!;
  }

  /**
   * By the same places as quantile(), each sample being the whole number nearest its place: the
   * samples at or below `bound` are those placed below floor(bound) + 1/2. A whole number.
   */
  countAtOrBelow(bound: number): number {
    const limit = Math.floor(bound) + 0.5;
    let total = 0;
    for (let at = 0; at < this.indices.length; at++) {
      const low = this.low(at);
      if (!(low < limit)) break;
      const high = this.high(at);
      const count = this.counts[at]!;
      // The j-th of c samples is placed at low + (high - low) * (j - 1/2) / c.
      total += high === low ? count : Math.min(count, Math.ceil(((limit - low) * count) / (high - low) + 0.5) - 1);
    }
    return total;
  }

  forEachSample(visit: (value: number, count: number) => void): void {
    for (let at = 0; at < this.indices.length; at++) {
      const low = this.low(at);
      const high = this.high(at);
      const count = this.counts[at]!;
      if (high === low) {
        visit(Math.round(low), count);
        continue;
      }
      // By sample when they are fewer than the bucket's integers (a bucket may span millions),
      // else by integer, counting the samples placed nearest it.
      if (count <= high - low) {
        let value = Math.round(low + (high - low) * (0.5 / count));
        let same = 0;
        for (let j = 1; j <= count; j++) {
          const next = Math.round(low + ((high - low) * (j - 0.5)) / count);
          if (next !== value) {
            visit(value, same);
            value = next;
            same = 0;
          }
          same++;
        }
        visit(value, same);
      } else {
        // The samples placed below `limit`, as countAtOrBelow() counts them.
        const below = (limit: number) => Math.min(count, Math.max(0, Math.ceil(((limit - low) * count) / (high - low) + 0.5) - 1));
        for (let value = Math.round(low); value <= Math.round(high); value++) {
          const samples = below(value + 0.5) - below(value - 0.5);
          if (samples > 0) visit(value, samples);
        }
      }
    }
  }

  /** Where the samples of the `at`-th occupied bucket start. */
  private low(at: number): number {
    const index = this.indices[at]!;
    return at === 0 ? middleValue(index) : bucketLowerBound(index);
  }

  /** Where they end. */
  private high(at: number): number {
    const index = this.indices[at]!;
    return at === this.indices.length - 1 ? middleValue(index) : topValue(index);
  }
}
