// Histograms of known data for the /stats renderer tests: the summary's answers are the samples
// themselves (nearest-rank quantiles, exact bucket counts), so expected output can be written
// down by hand. The store's own summaries are tested with the store.

import type { HistogramSample, HistogramSummary, ScalarSample } from '../../src/stats/sample';

export class SampleSummary implements HistogramSummary {
  private readonly sorted: readonly number[];
  readonly count: number;
  readonly sum: number;

  constructor(samples: readonly number[]) {
    this.sorted = [...samples].sort((a, b) => a - b);
    this.count = samples.length;
    this.sum = samples.reduce((a, b) => a + b, 0);
  }

  /** Nearest rank: the smallest sample with at least q of them at or below it. */
  quantile(q: number): number {
    if (this.count === 0) return NaN;
    return this.sorted[Math.max(0, Math.ceil(q * this.count) - 1)]!;
  }

  countAtOrBelow(bound: number): number {
    return this.sorted.filter((v) => v <= bound).length;
  }
}

/** A histogram with these cumulative samples and, unless null, these interval ones. */
export function histogram(name: string, cumulative: readonly number[], interval: readonly number[] | null = null): HistogramSample {
  return {
    name,
    used: cumulative.length > 0,
    interval: interval === null ? null : new SampleSummary(interval),
    cumulative: new SampleSummary(cumulative),
  };
}

export function counter(name: string, value: number, used = value !== 0): ScalarSample {
  return { name, kind: 'counter', value, used };
}

export function gauge(name: string, value: number, used = true): ScalarSample {
  return { name, kind: 'gauge', value, used };
}
