// The log-linear bucket scheme every histogram records into (HdrHistogram's idea, fixed here):
// values are non-negative integers, exact below 128, then 64 buckets per power of two, so a
// bucket is at most 1/64 of its values wide and a quantile read at its middle is within 0.8%.
// Pure: an index per value, and the bounds of each index; counts live wherever the caller keeps
// them (per-writer Uint32Arrays in the shared region, merged Float64Arrays in the supervisor).

/** Values below this have a bucket each. */
const EXACT_LIMIT = 128;
const SUB_BUCKET_BITS = 6;
const SUB_BUCKETS = 1 << SUB_BUCKET_BITS;
/** log2(EXACT_LIMIT): the first octave split into sub-buckets. */
const FIRST_OCTAVE = 7;
/** Values at or above 2^32 (49 days in ms, 4 GiB in bytes) share the last bucket. */
const LAST_OCTAVE = 31;

export const BUCKET_COUNT = EXACT_LIMIT + (LAST_OCTAVE - FIRST_OCTAVE + 1) * SUB_BUCKETS;
export const MAX_TRACKED_VALUE = 2 ** (LAST_OCTAVE + 1) - 1;

/** The bucket of a recorded value: rounded to an integer, negatives and NaN as 0. */
export function bucketIndex(value: number): number {
  if (!(value > 0)) return 0;
  const v = Math.round(value);
  if (v < EXACT_LIMIT) return v;
  if (v > MAX_TRACKED_VALUE) return BUCKET_COUNT - 1;
  const octave = 31 - Math.clz32(v);
  const sub = (v >>> (octave - SUB_BUCKET_BITS)) & (SUB_BUCKETS - 1);
  return EXACT_LIMIT + (octave - FIRST_OCTAVE) * SUB_BUCKETS + sub;
}

/** Smallest integer value that falls in `index`. */
export function bucketLowerBound(index: number): number {
  if (index < EXACT_LIMIT) return index;
  const octave = FIRST_OCTAVE + Math.floor((index - EXACT_LIMIT) / SUB_BUCKETS);
  const sub = (index - EXACT_LIMIT) % SUB_BUCKETS;
  return 2 ** octave + sub * 2 ** (octave - SUB_BUCKET_BITS);
}

/** One past the largest integer value that falls in `index`. */
export function bucketUpperBound(index: number): number {
  return index === BUCKET_COUNT - 1 ? Infinity : bucketLowerBound(index + 1);
}
