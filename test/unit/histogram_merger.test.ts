import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bucketIndex } from '../../src/stats/histogram_buckets';
import { HistogramMerger } from '../../src/stats/histogram_merger';
import { HistogramWriter } from '../helpers/histogram_writer';

const H = 7;

test('two writers: each interval holds the samples since the previous flush, cumulative all of them', () => {
  const merger = new HistogramMerger();
  const a = new HistogramWriter().record(10, 20);
  const b = new HistogramWriter().record(30);
  merger.flush([[H, [a, b]]]);
  assert.equal(merger.interval(H)!.count, 3);
  assert.equal(merger.interval(H)!.sum, 60);
  assert.equal(merger.interval(H)!.quantile(1), 30);
  a.record(1000);
  b.record(5, 5);
  merger.flush([[H, [a, b]]]);
  const interval = merger.interval(H)!;
  assert.equal(interval.count, 3);
  assert.equal(interval.sum, 1010);
  assert.equal(interval.quantile(0), 5);
  assert.equal(interval.countAtOrBelow(30), 2);
  const cumulative = merger.cumulative(H);
  assert.equal(cumulative.count, 6);
  assert.equal(cumulative.sum, 1070);
  assert.equal(cumulative.quantile(0), 5);
  assert.equal(cumulative.countAtOrBelow(30), 5);
});

test('an idle flush leaves no interval and the cumulative as it was', () => {
  const merger = new HistogramMerger();
  const a = new HistogramWriter().record(42);
  merger.flush([[H, [a]]]);
  const cumulative = merger.cumulative(H);
  merger.flush([[H, [a]]]);
  assert.equal(merger.interval(H), null);
  assert.equal(merger.cumulative(H), cumulative);
  // Left out of a flush is idle too.
  a.record(43);
  merger.flush([]);
  assert.equal(merger.interval(H), null);
  merger.flush([[H, [a]]]);
  assert.equal(merger.interval(H)!.count, 1);
  assert.equal(merger.cumulative(H).count, 2);
});

test('a writer folded into another between flushes: nothing lost, nothing counted twice', () => {
  const merger = new HistogramMerger();
  const a = new HistogramWriter().record(1, 2, 3);
  const b = new HistogramWriter().record(4);
  merger.flush([[H, [a, b]]]);
  a.record(500, 600); // not flushed yet when its process exits
  a.foldInto(b);
  merger.flush([[H, [b]]]);
  assert.equal(merger.interval(H)!.count, 2);
  assert.equal(merger.interval(H)!.sum, 1100);
  assert.equal(merger.cumulative(H).count, 6);
  assert.equal(merger.cumulative(H).sum, 1110);
  merger.flush([[H, [b]]]);
  assert.equal(merger.interval(H), null);
  assert.equal(merger.cumulative(H).count, 6);
});

test('a writer briefly left out before its fold counts nothing until it is back', () => {
  const merger = new HistogramMerger();
  const a = new HistogramWriter().record(7, 7);
  const b = new HistogramWriter().record(9);
  merger.flush([[H, [a, b]]]);
  b.record(9);
  merger.flush([[H, [b]]]);
  assert.equal(merger.interval(H)!.count, 1);
  assert.equal(merger.cumulative(H).count, 4);
  a.foldInto(b);
  merger.flush([[H, [b]]]);
  assert.equal(merger.interval(H), null);
  assert.equal(merger.cumulative(H).count, 4);
  assert.equal(merger.cumulative(H).countAtOrBelow(7), 2);
});

test('a Uint32 bucket count that wraps keeps counting', () => {
  const merger = new HistogramMerger();
  const a = new HistogramWriter();
  a.buckets[bucketIndex(3)] = 2 ** 32 - 2;
  merger.flush([[H, [a]]]);
  assert.equal(merger.cumulative(H).count, 2 ** 32 - 2);
  a.record(3, 3, 3, 3, 3);
  assert.equal(a.buckets[bucketIndex(3)], 3);
  merger.flush([[H, [a]]]);
  assert.equal(merger.interval(H)!.count, 5);
  assert.equal(merger.cumulative(H).count, 2 ** 32 + 3);
});

test('histograms are merged apart, and only those with samples keep counts', () => {
  const merger = new HistogramMerger();
  const recorded = new HistogramWriter().record(100);
  merger.flush([[1, [recorded]], [2, [new HistogramWriter(), new HistogramWriter()]]]);
  assert.equal(merger.cumulative(1).count, 1);
  assert.equal(merger.interval(2), null);
  assert.equal(merger.cumulative(2).count, 0);
  assert.ok(Number.isNaN(merger.cumulative(2).quantile(0.5)));
  assert.equal(merger.cumulative(99).count, 0);
});

test('a bucket view of another length is refused', () => {
  const merger = new HistogramMerger();
  assert.throws(() => merger.flush([[H, [{ buckets: new Uint32Array(10), sum: 0 }]]]), /histogram 7: expected 1728 buckets, got 10/);
});
