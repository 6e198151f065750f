// The Prometheus text exposition (format 0.0.4) of /stats/prometheus and /stats?format=prometheus:
// counters, then gauges, then histograms. Within each, stats are grouped by metric name (the
// tag-extracted name, `proxy_`-prefixed and sanitized), groups in name order, each a `# TYPE`
// line, one line per stat in full-name order, then a blank line. A histogram shows its
// cumulative data: `_bucket{..,le=".."}` counts, `_bucket{..,le="+Inf"}`, `_sum` and `_count`.
// Grouping by the sanitized name rather than the raw one keeps two names that sanitize alike
// (`a.b`, `a_b`) in one group: a second TYPE line for a name is an error to Prometheus.

import { ChunkBuffer, EMPTY_CHUNK } from './chunk_buffer';
import type { BucketBounds, HistogramBucketSettings } from './histogram_bucket_settings';
import { formatG32 } from './number_format';
import { Group, PrometheusGroups, sameStats, StatList } from './prometheus_groups';
import { isScalarSelected, isSelected, StatsQuery } from './render';
import type { HistogramSample, StatsSnapshot } from '../../stats/sample';
import type { TagExtractor } from './tag_extractor';

/** Stats grouped per turn of the event loop when a grouping is made (see ChunkBuffer). */
const GROUPING_BATCH = 4096;
const SCALAR_TYPES = ['counter', 'gauge'];
const HISTOGRAM_TYPES = ['histogram'];

/** The histograms of a snapshot as a StatList; a name is encoded when first read as bytes. */
function histogramList(histograms: readonly HistogramSample[]): StatList {
  const encoded: Buffer[] = [];
  const bytes = (i: number) => (encoded[i] ??= Buffer.from(histograms[i]!.name));
  return {
    length: histograms.length,
    name: (i) => histograms[i]!.name,
    id: (i) => histograms[i]!.id ?? -1,
    nameArray: bytes,
    nameStart: () => 0,
    nameLength: (i) => bytes(i).length,
  };
}

/**
 * A group's TYPE line comes with its first selected stat: a group the query empties is left out.
 * `selected` is null when the query takes every stat. `write` writes the lines of the stat at a
 * position, given its label text.
 */
function* writeGroups(
  grouped: PrometheusGroups,
  selected: ((position: number) => boolean) | null,
  out: ChunkBuffer,
  write: (group: Group, labels: Uint8Array, position: number) => void,
): Generator<Buffer> {
  const labels = grouped.labels;
  for (const group of grouped.groups) {
    let written = false;
    const positions = group.positions;
    for (let i = 0; i < positions.length; i++) {
      const position = positions[i]!;
      if (selected === null || selected(position)) {
        if (!written) out.text(`# TYPE ${group.name} ${group.type}\n`);
        written = true;
        write(group, labels[position]!, position);
      }
      if (out.step()) yield out.take();
    }
    if (written) out.text('\n');
  }
}

const CLOSE_LABELS = Buffer.from('} ');
const NEWLINE = 0x0a;

/** `name{labels} value`, from `open`, `name{`. */
function writeSample(out: ChunkBuffer, open: Uint8Array, labels: Uint8Array, value: number): void {
  out.bytes(open);
  out.bytes(labels);
  out.bytes(CLOSE_LABELS);
  out.number(value);
  out.byte(NEWLINE);
}

/**
 * A grouping being made, a batch per step: whoever needs it next (the supervisor's preparation
 * once serving, or a scrape that came first) takes the next step, so it is made once.
 */
interface Grouping {
  readonly stats: StatList;
  readonly steps: Generator<void, PrometheusGroups>;
  done: PrometheusGroups | null;
}

export class PrometheusFormatter {
  /** The last groupings made, reused while the snapshots list the same stats. */
  private scalarGroups: PrometheusGroups | null = null;
  private histogramGroups: PrometheusGroups | null = null;
  /** The groupings being made, if any. */
  private scalarGrouping: Grouping | null = null;
  private histogramGrouping: Grouping | null = null;
  /** Bucket line tails per set of bounds (the settings keep one object per set). */
  private readonly tails = new WeakMap<BucketBounds, BucketTails>();

  constructor(
    private readonly names: TagExtractor,
    private readonly buckets: HistogramBucketSettings,
  ) {}

  *render(snapshot: StatsSnapshot, q: StatsQuery): Generator<Buffer> {
    const { scalars, histograms } = yield* this.prepare(snapshot);
    const out = new ChunkBuffer();
    const s = snapshot.scalars;
    const h = snapshot.histograms;
    const all = q.filter === null && !q.usedOnly;
    yield* writeGroups(scalars, all ? null : (i) => isScalarSelected(s, i, q), out, (group, labels, i) => writeSample(out, group.open, labels, s.value(i)));
    const metrics = new Map<Group, HistogramMetric>();
    yield* writeGroups(histograms, all ? null : (i) => isSelected(h[i]!.name, h[i]!.used, q), out, (group, labels, i) => {
      let metric = metrics.get(group);
      if (metric === undefined) {
        metric = histogramMetric(group.name);
        metrics.set(group, metric);
      }
      this.writeHistogram(out, metric, labels, h[i]!);
    });
    yield out.take();
  }

  /**
   * The groupings of the snapshot's stats: the last ones, or new ones made a batch per yield
   * (empty chunks). The supervisor runs it once serving, so that a first scrape finds them made.
   */
  *prepare(snapshot: StatsSnapshot): Generator<Buffer, { scalars: PrometheusGroups; histograms: PrometheusGroups }> {
    const scalars = snapshot.scalars;
    if (this.scalarGroups === null || !this.scalarGroups.fits(scalars)) {
      if (this.scalarGrouping === null || !sameStats(this.scalarGrouping.stats, scalars)) {
        this.scalarGrouping = this.grouping(scalars, (list, i) => (list.isCounter(i) ? 0 : 1), SCALAR_TYPES);
      }
      this.scalarGroups = yield* this.finish(this.scalarGrouping);
      // Made: the snapshot it was made from can go.
      this.scalarGrouping = null;
    }
    const histograms = histogramList(snapshot.histograms);
    if (this.histogramGroups === null || !this.histogramGroups.fits(histograms)) {
      if (this.histogramGrouping === null || !sameStats(this.histogramGrouping.stats, histograms)) {
        this.histogramGrouping = this.grouping(histograms, () => 0, HISTOGRAM_TYPES);
      }
      this.histogramGroups = yield* this.finish(this.histogramGrouping);
      this.histogramGrouping = null;
    }
    return { scalars: this.scalarGroups, histograms: this.histogramGroups };
  }

  private grouping<T extends StatList>(stats: T, typeOf: (stats: T, i: number) => number, types: readonly string[]): Grouping {
    return { stats, steps: PrometheusGroups.build(stats, typeOf, types, this.names, GROUPING_BATCH), done: null };
  }

  /** Takes a grouping's steps until it is made (by this caller or another), pausing with empty chunks. */
  private *finish(grouping: Grouping): Generator<Buffer, PrometheusGroups> {
    while (grouping.done === null) {
      const step = grouping.steps.next();
      if (step.done === true) grouping.done = step.value;
      else yield EMPTY_CHUNK;
    }
    return grouping.done;
  }

  private writeHistogram(out: ChunkBuffer, metric: HistogramMetric, labels: Uint8Array, h: HistogramSample): void {
    const c = h.cumulative;
    const bounds = this.buckets.boundsFor(h.name);
    const tails = this.bucketTails(bounds);
    const tail = labels.length === 0 ? tails.alone : tails.afterLabels;
    // Never recorded into: every bucket is 0, without asking the summary for each.
    const empty = c.count === 0;
    for (let i = 0; i <= bounds.values.length; i++) {
      out.bytes(metric.bucket);
      out.bytes(labels);
      out.bytes(tail[i]!);
      out.number(i === bounds.values.length ? c.count : empty ? 0 : c.countAtOrBelow(bounds.values[i]!));
      out.byte(NEWLINE);
    }
    out.bytes(metric.sum);
    out.bytes(labels);
    out.text(`} ${formatG32(c.sum)}\n`);
    writeSample(out, metric.count, labels, c.count);
  }

  private bucketTails(bounds: BucketBounds): BucketTails {
    let tails = this.tails.get(bounds);
    if (tails === undefined) {
      const le = [...bounds.labels, '+Inf'].map((label) => `le="${label}"} `);
      tails = { alone: le.map((t) => Buffer.from(t)), afterLabels: le.map((t) => Buffer.from(`,${t}`)) };
      this.tails.set(bounds, tails);
    }
    return tails;
  }
}

/** The starts of a histogram metric's lines, `_bucket{`, `_sum{` and `_count{`, encoded once per scrape. */
interface HistogramMetric {
  readonly bucket: Uint8Array;
  readonly sum: Uint8Array;
  readonly count: Uint8Array;
}

function histogramMetric(name: string): HistogramMetric {
  return { bucket: Buffer.from(`${name}_bucket{`), sum: Buffer.from(`${name}_sum{`), count: Buffer.from(`${name}_count{`) };
}

/** What follows the labels on each bucket line, `le="<bound>"} ` then `le="+Inf"} `, encoded once. */
interface BucketTails {
  /** For a histogram without labels. */
  readonly alone: readonly Uint8Array[];
  /** After other labels: with a leading comma. */
  readonly afterLabels: readonly Uint8Array[];
}
