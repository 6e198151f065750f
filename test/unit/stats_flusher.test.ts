import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HistogramMerger, HistogramWriters } from '../../src/stats/histogram_merger';
import { StatsFlusher } from '../../src/stats/stats_flusher';
import { HistogramWriter } from '../helpers/histogram_writer';
import { ManualClock } from '../helpers/manual_clock';

const H = 3;

function setup(intervalMs = 5000) {
  const clock = new ManualClock();
  const merger = new HistogramMerger();
  const writer = new HistogramWriter();
  let reads = 0;
  const histograms = (): HistogramWriters[] => {
    reads++;
    return [[H, [writer]]];
  };
  const flusher = new StatsFlusher({ clock, intervalMs, merger, histograms });
  return { clock, merger, writer, flusher, reads: () => reads };
}

test('flushes at start, then once every interval', () => {
  const { clock, merger, writer, flusher, reads } = setup();
  writer.record(1, 2); // held before start: a hot-restart parent's samples
  flusher.start();
  assert.equal(reads(), 1);
  assert.equal(merger.interval(H)!.count, 2);
  writer.record(50);
  clock.advance(4999);
  assert.equal(reads(), 1);
  assert.equal(merger.interval(H)!.count, 2);
  clock.advance(1);
  assert.equal(reads(), 2);
  assert.equal(merger.interval(H)!.count, 1);
  assert.equal(merger.cumulative(H).count, 3);
  clock.advance(5000);
  assert.equal(merger.interval(H), null);
  writer.record(7, 8, 9);
  clock.advance(15000);
  assert.equal(reads(), 6);
  assert.equal(merger.interval(H), null);
  assert.equal(merger.cumulative(H).count, 6);
});

test("the owner's gauges are updated at each tick and flush, not at the start's merge", () => {
  const clock = new ManualClock();
  let updates = 0;
  const flusher = new StatsFlusher({ clock, intervalMs: 5000, merger: new HistogramMerger(), histograms: () => [], beforeFlush: () => updates++ });
  flusher.start();
  assert.equal(updates, 0);
  clock.advance(5000);
  assert.equal(updates, 1);
  flusher.flush();
  assert.equal(updates, 2);
  flusher.stop();
});

test('the interval is the configured one', () => {
  const { clock, flusher, reads } = setup(250);
  flusher.start();
  clock.advance(1000);
  assert.equal(reads(), 5);
});

test('flush() ends an interval between ticks; stop() ends the ticks', () => {
  const { clock, merger, writer, flusher, reads } = setup();
  flusher.start();
  writer.record(10);
  flusher.flush();
  assert.equal(merger.interval(H)!.count, 1);
  flusher.stop();
  assert.equal(clock.pending, 0);
  clock.advance(60_000);
  assert.equal(reads(), 2);
  flusher.stop();
});

test('a second start and an interval below 1 ms are refused', () => {
  const { flusher } = setup();
  flusher.start();
  assert.throws(() => flusher.start(), /already started/);
  for (const intervalMs of [0, 0.5, NaN]) assert.throws(() => setup(intervalMs), RangeError);
});

test('the sinks (afterFlush) run after each merge but the start\'s, whose interval is not one', () => {
  const clock = new ManualClock();
  const merger = new HistogramMerger();
  const writer = new HistogramWriter();
  const seen: (number | null)[] = [];
  const flusher = new StatsFlusher({
    clock,
    intervalMs: 1000,
    merger,
    histograms: () => [[H, [writer]]],
    afterFlush: () => seen.push(merger.interval(H)?.count ?? null),
  });
  writer.record(1, 2);
  flusher.start();
  assert.deepEqual(seen, []);
  writer.record(3);
  clock.advance(1000);
  flusher.flush();
  writer.record(4, 5);
  clock.advance(1000);
  assert.deepEqual(seen, [1, null, 2]);
  flusher.stop();
});
