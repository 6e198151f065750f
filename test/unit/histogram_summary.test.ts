import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUCKET_COUNT, bucketIndex } from '../../src/stats/histogram_buckets';
import { BucketSummary } from '../../src/stats/histogram_summary';
import { exponentialSample, normalSample, seededRandom } from '../helpers/seeded_random';

// Every estimate is compared with the exact answer over the same generated integers (the proxy
// records integers: milliseconds, bytes).

const SAMPLES = 100_000;
const QUANTILES = [
  0, 0.001, 0.005, 0.995, 0.999, 0.9995, 0.9999, 1,
  ...Array.from({ length: 99 }, (_, i) => (i + 1) / 100),
];
/** Envoy's default Prometheus buckets. */
const ENVOY_BOUNDS = [0.5, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 600000, 1800000, 3600000];

function summarize(values: readonly number[]): BucketSummary {
  const counts = new Float64Array(BUCKET_COUNT);
  for (const v of values) counts[bucketIndex(v)]!++;
  return BucketSummary.fromCounts(counts, values.reduce((a, b) => a + b, 0));
}

function generate(seed: number, sample: (random: () => number) => number): number[] {
  const random = seededRandom(seed);
  return Array.from({ length: SAMPLES }, () => Math.max(0, Math.round(sample(random))));
}

/** The smallest value with at least q * n values at or below it. */
function exactQuantile(sorted: readonly number[], q: number): number {
  return sorted[Math.max(1, Math.ceil(q * sorted.length - 1e-9)) - 1]!;
}

function relativeError(estimate: number, exact: number): number {
  if (exact === 0) return estimate === 0 ? 0 : Infinity;
  return Math.abs(estimate - exact) / exact;
}

const DISTRIBUTIONS: [string, (random: () => number) => number][] = [
  ['uniform 1..10000', (r) => 1 + Math.floor(r() * 10000)],
  ['exponential, mean 100', (r) => exponentialSample(r, 100)],
  ['normal 250, sd 30', (r) => normalSample(r, 250, 30)],
  ['bimodal: 70% normal 50 sd 10, 30% normal 2000 sd 300', (r) => (r() < 0.7 ? normalSample(r, 50, 10) : normalSample(r, 2000, 300))],
];

for (const [name, sample] of DISTRIBUTIONS) {
  test(`${name}: every quantile within 1% of the exact one`, (t) => {
    let worst = { error: 0, q: 0, exact: 0, estimate: 0 };
    for (const seed of [1, 2, 3]) {
      const values = generate(seed, sample);
      const summary = summarize(values);
      const sorted = [...values].sort((a, b) => a - b);
      assert.equal(summary.count, SAMPLES);
      for (const q of QUANTILES) {
        const exact = exactQuantile(sorted, q);
        const estimate = summary.quantile(q);
        const error = relativeError(estimate, exact);
        if (error > worst.error) worst = { error, q, exact, estimate };
      }
    }
    t.diagnostic(`worst ${(worst.error * 100).toFixed(3)}% at q=${worst.q}: ${worst.estimate} for ${worst.exact}`);
    assert.ok(worst.error < 0.01, `${worst.estimate} for ${worst.exact} at q=${worst.q}`);
  });
}

test('quantiles never decrease with q, and stay within the samples', () => {
  const values = generate(7, (r) => exponentialSample(r, 100));
  const summary = summarize(values);
  let previous = -Infinity;
  for (let i = 0; i <= 1000; i++) {
    const value = summary.quantile(i / 1000);
    assert.ok(value >= previous, `q=${i / 1000}`);
    previous = value;
  }
  assert.equal(summary.quantile(0), Math.min(...values));
});

test('values below 128 are read exactly, whatever the distribution', () => {
  const values = generate(11, (r) => Math.min(127, exponentialSample(r, 20)));
  const summary = summarize(values);
  const sorted = [...values].sort((a, b) => a - b);
  for (const q of QUANTILES) assert.equal(summary.quantile(q), exactQuantile(sorted, q), `q=${q}`);
});

test('a constant reads as itself below 128, as its bucket middle (within 1/128) above', () => {
  const hundred = summarize(new Array(1000).fill(100));
  for (const q of QUANTILES) assert.equal(hundred.quantile(q), 100);
  for (const constant of [128, 1000, 1039, 5000, 123457, 2 ** 31 + 5]) {
    const summary = summarize(new Array(1000).fill(constant));
    const value = summary.quantile(0);
    assert.ok(relativeError(value, constant) < 1 / 128, `${value} for ${constant}`);
    for (const q of QUANTILES) assert.equal(summary.quantile(q), value, `${constant} at q=${q}`);
  }
});

test('the last bucket also holds values beyond the tracked range, read at most as 2^32 - 1', () => {
  const summary = summarize([10, 2 ** 40]);
  assert.equal(summary.quantile(0), 10);
  assert.ok(summary.quantile(1) <= 2 ** 32 - 1);
  assert.ok(summary.quantile(1) > 2 ** 31);
});

test('countAtOrBelow: exact for every bound below 128', () => {
  const values = generate(5, (r) => exponentialSample(r, 100));
  const summary = summarize(values);
  for (let bound = -1; bound < 128; bound += 0.5) {
    assert.equal(summary.countAtOrBelow(bound), values.filter((v) => v <= bound).length, `le ${bound}`);
  }
});

test('countAtOrBelow: Envoy\'s bounds within 1% of all samples, whole numbers, never decreasing', (t) => {
  let worst = 0;
  for (const [, sample] of DISTRIBUTIONS) {
    const values = generate(9, sample);
    const summary = summarize(values);
    let previous = 0;
    for (const bound of ENVOY_BOUNDS) {
      const count = summary.countAtOrBelow(bound);
      assert.ok(Number.isInteger(count) && count >= previous, `le ${bound}`);
      previous = count;
      worst = Math.max(worst, Math.abs(count - values.filter((v) => v <= bound).length) / SAMPLES);
    }
    assert.equal(summary.countAtOrBelow(Infinity), SAMPLES);
  }
  t.diagnostic(`worst ${(worst * 100).toFixed(3)}% of the samples`);
  assert.ok(worst < 0.01);
});

test('countAtOrBelow agrees with quantile(), whose estimates are of whole numbers', () => {
  const summary = summarize(generate(13, (r) => normalSample(r, 250, 30)));
  for (let i = 0; i <= 100; i++) {
    const q = i / 100;
    assert.ok(summary.countAtOrBelow(Math.round(summary.quantile(q))) >= q * summary.count, `q=${q}`);
  }
});

test('no samples: NaN quantiles, nothing at or below any bound', () => {
  const summary = BucketSummary.fromCounts(new Float64Array(BUCKET_COUNT), 0);
  assert.equal(summary.count, 0);
  for (const q of [0, 0.5, 1]) assert.ok(Number.isNaN(summary.quantile(q)));
  assert.equal(summary.countAtOrBelow(Infinity), 0);
});

test('counts beyond 2^32 and sums are kept', () => {
  const counts = new Float64Array(BUCKET_COUNT);
  counts[5] = 2 ** 33;
  counts[200] = 1;
  const summary = BucketSummary.fromCounts(counts, 123.5);
  assert.equal(summary.count, 2 ** 33 + 1);
  assert.equal(summary.sum, 123.5);
  assert.equal(summary.quantile(0.5), 5);
  assert.equal(summary.countAtOrBelow(5), 2 ** 33);
});

test('a quantile outside [0, 1] or bucket counts of another length are refused', () => {
  const summary = summarize([1, 2, 3]);
  for (const q of [-0.1, 1.5, NaN]) assert.throws(() => summary.quantile(q), RangeError);
  assert.throws(() => BucketSummary.fromCounts(new Float64Array(10), 0), /expected 1728 bucket counts, got 10/);
});

/** forEachSample's visits as [value, count] pairs. */
function samplesOf(summary: BucketSummary): [number, number][] {
  const out: [number, number][] = [];
  summary.forEachSample((value, count) => out.push([value, count]));
  return out;
}

test('forEachSample: values below 128 are the samples themselves, equal ones together', () => {
  assert.deepEqual(samplesOf(summarize([3, 5, 3, 127, 0])), [[0, 1], [3, 2], [5, 1], [127, 1]]);
  assert.deepEqual(samplesOf(BucketSummary.fromCounts(new Float64Array(BUCKET_COUNT), 0)), []);
});

test('forEachSample places wider buckets\' samples as countAtOrBelow counts them, in ascending order', () => {
  const cases: [string, BucketSummary][] = [
    ['a few per bucket', summarize(generate(21, (r) => 200 + r() * 5000).slice(0, 300))],
    ['many per bucket', summarize(generate(22, (r) => normalSample(r, 1000, 40)))],
    ['one bucket, more samples than integers', summarize(Array.from({ length: 5000 }, () => 1000))],
  ];
  for (const [name, summary] of cases) {
    const visits = samplesOf(summary);
    assert.equal(visits.reduce((total, [, count]) => total + count, 0), summary.count, name);
    for (let i = 1; i < visits.length; i++) assert.ok(visits[i]![0] > visits[i - 1]![0], `${name}: ascending, each value once`);
    let seen = 0;
    for (const [value, count] of visits) {
      seen += count;
      assert.equal(seen, summary.countAtOrBelow(value), `${name}: samples at or below ${value}`);
    }
  }
});

test('forEachSample visits a bucket millions of integers wide once per sample, not per integer', () => {
  const counts = new Float64Array(BUCKET_COUNT);
  counts[1] = 1;
  counts[BUCKET_COUNT - 2] = 3;
  const visits = samplesOf(BucketSummary.fromCounts(counts, 0));
  assert.deepEqual(visits[0], [1, 1]);
  assert.equal(visits.length, 4);
  assert.ok(visits.slice(1).every(([value, count]) => count === 1 && value >= 2 ** 31));
});
