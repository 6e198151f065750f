// Stats of known data for the /stats renderer tests: counters and gauges as plain objects, and
// histograms whose summary's answers are the samples themselves (nearest-rank quantiles, exact
// bucket counts), so expected output can be written down by hand. The store's own summaries
// are tested with the store.

import type { HistogramSample, HistogramSummary, ScalarList } from '../../src/stats/sample';

/** A counter or gauge as an object: what a test writes down, and reads back from a ScalarList. */
export interface ScalarSample {
  readonly name: string;
  readonly id?: number;
  readonly kind: 'counter' | 'gauge';
  readonly value: number;
  readonly used: boolean;
}

/** A snapshot's ScalarList over objects (the region's is typed arrays). */
export function scalarList(samples: readonly ScalarSample[]): ScalarList {
  const names = samples.map((s) => Buffer.from(s.name));
  return {
    length: samples.length,
    name: (i) => samples[i]!.name,
    nameArray: (i) => names[i]!,
    nameStart: () => 0,
    nameLength: (i) => names[i]!.length,
    id: (i) => samples[i]!.id ?? -1,
    isCounter: (i) => samples[i]!.kind === 'counter',
    value: (i) => samples[i]!.value,
    used: (i) => samples[i]!.used,
  };
}

/** A ScalarList's stats as objects, in its order. */
export function scalarsOf(list: ScalarList): ScalarSample[] {
  return Array.from({ length: list.length }, (_, i) => ({
    name: list.name(i),
    id: list.id(i),
    kind: list.isCounter(i) ? 'counter' : 'gauge',
    value: list.value(i),
    used: list.used(i),
  }));
}

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

  forEachSample(visit: (value: number, count: number) => void): void {
    const counts = new Map<number, number>();
    for (const sample of this.sorted) counts.set(Math.round(sample), (counts.get(Math.round(sample)) ?? 0) + 1);
    for (const [value, count] of counts) visit(value, count);
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
