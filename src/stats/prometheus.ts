// The Prometheus text exposition (format 0.0.4) of /stats/prometheus and /stats?format=prometheus:
// counters, then gauges, then histograms. Within each, stats are grouped by metric name (the
// tag-extracted name, `proxy_`-prefixed and sanitized), groups in name order, each a `# TYPE`
// line, one line per stat in full-name order, then a blank line. A histogram shows its
// cumulative data: `_bucket{..,le=".."}` counts, `_bucket{..,le="+Inf"}`, `_sum` and `_count`.
// Grouping by the sanitized name rather than the raw one keeps two names that sanitize alike
// (`a.b`, `a_b`) in one group: a second TYPE line for a name is an error to Prometheus.

import { ChunkBuffer } from './chunk_buffer';
import type { HistogramBucketSettings } from './histogram_bucket_settings';
import { formatG32 } from './number_format';
import { Group, PrometheusGroups } from './prometheus_groups';
import { isSelected, StatsQuery } from './render';
import type { HistogramSample, ScalarSample, StatsSnapshot } from './sample';
import type { TagExtractor } from './tag_extractor';

/** Stats grouped per turn of the event loop when a grouping is made (see ChunkBuffer). */
const GROUPING_BATCH = 4096;
const SCALAR_TYPES = ['counter', 'gauge'];
const HISTOGRAM_TYPES = ['histogram'];

function scalarLine(name: string, labels: string, s: ScalarSample): string {
  return `${name}{${labels}} ${s.value}\n`;
}

/** A group's TYPE line comes with its first selected stat: a group the query empties is left out. */
function* writeGroups<T extends { readonly name: string; readonly used: boolean }>(
  stats: readonly T[],
  groups: readonly Group[],
  q: StatsQuery,
  out: ChunkBuffer,
  lines: (name: string, labels: string, stat: T) => string,
): Generator<string> {
  for (const group of groups) {
    let written = false;
    for (let i = 0; i < group.positions.length; i++) {
      const stat = stats[group.positions[i]!]!;
      if (isSelected(stat, q)) {
        if (!written) out.add(`# TYPE ${group.name} ${group.type}\n`);
        written = true;
        out.add(lines(group.name, group.labels[i]!, stat));
      }
      if (out.step()) yield out.take();
    }
    if (written) out.add('\n');
  }
}

/**
 * A grouping being made, a batch per step: whoever needs it next (the supervisor's preparation
 * once serving, or a scrape that came first) takes the next step, so it is made once.
 */
interface Grouping {
  readonly stats: readonly { readonly id?: number }[];
  readonly steps: Generator<void, PrometheusGroups>;
  done: PrometheusGroups | null;
}

/** Whether two snapshots list the same stats in the same order (a grouping fits both). */
function sameStats(a: readonly { readonly id?: number }[], b: readonly { readonly id?: number }[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const id = a[i]!.id;
    if (id === undefined || id !== b[i]!.id) return false;
  }
  return true;
}

export class PrometheusFormatter {
  /** The last groupings made, reused while the snapshots list the same stats. */
  private scalarGroups: PrometheusGroups | null = null;
  private histogramGroups: PrometheusGroups | null = null;
  /** The groupings being made, if any. */
  private scalarGrouping: Grouping | null = null;
  private histogramGrouping: Grouping | null = null;

  constructor(
    private readonly names: TagExtractor,
    private readonly buckets: HistogramBucketSettings,
  ) {}

  *render(snapshot: StatsSnapshot, q: StatsQuery): Generator<string> {
    const { scalars, histograms } = yield* this.prepare(snapshot);
    const out = new ChunkBuffer();
    yield* writeGroups(snapshot.scalars, scalars.groups, q, out, scalarLine);
    yield* writeGroups(snapshot.histograms, histograms.groups, q, out, (name, labels, h) => this.histogramLines(name, labels, h));
    yield out.take();
  }

  /**
   * The groupings of the snapshot's stats: the last ones, or new ones made a batch per yield
   * (empty chunks). The supervisor runs it once serving, so that a first scrape finds them made.
   */
  *prepare(snapshot: StatsSnapshot): Generator<string, { scalars: PrometheusGroups; histograms: PrometheusGroups }> {
    if (this.scalarGroups === null || !this.scalarGroups.fits(snapshot.scalars)) {
      if (this.scalarGrouping === null || !sameStats(this.scalarGrouping.stats, snapshot.scalars)) {
        this.scalarGrouping = this.grouping(snapshot.scalars, (s) => s.kind, SCALAR_TYPES);
      }
      this.scalarGroups = yield* this.finish(this.scalarGrouping);
      // Made: the snapshot it was made from can go.
      this.scalarGrouping = null;
    }
    if (this.histogramGroups === null || !this.histogramGroups.fits(snapshot.histograms)) {
      if (this.histogramGrouping === null || !sameStats(this.histogramGrouping.stats, snapshot.histograms)) {
        this.histogramGrouping = this.grouping(snapshot.histograms, () => 'histogram', HISTOGRAM_TYPES);
      }
      this.histogramGroups = yield* this.finish(this.histogramGrouping);
      this.histogramGrouping = null;
    }
    return { scalars: this.scalarGroups, histograms: this.histogramGroups };
  }

  private grouping<T extends { readonly name: string; readonly id?: number }>(
    stats: readonly T[],
    typeOf: (stat: T) => string,
    types: readonly string[],
  ): Grouping {
    return { stats, steps: PrometheusGroups.build(stats, typeOf, types, this.names, GROUPING_BATCH), done: null };
  }

  /** Takes a grouping's steps until it is made (by this caller or another), pausing with empty chunks. */
  private *finish(grouping: Grouping): Generator<string, PrometheusGroups> {
    while (grouping.done === null) {
      const step = grouping.steps.next();
      if (step.done === true) grouping.done = step.value;
      else yield '';
    }
    return grouping.done;
  }

  private histogramLines(name: string, labels: string, h: HistogramSample): string {
    const c = h.cumulative;
    const le = labels === '' ? 'le=' : `${labels},le=`;
    const bounds = this.buckets.boundsFor(h.name);
    let text = '';
    for (let i = 0; i < bounds.values.length; i++) {
      text += `${name}_bucket{${le}"${bounds.labels[i]}"} ${c.countAtOrBelow(bounds.values[i]!)}\n`;
    }
    text += `${name}_bucket{${le}"+Inf"} ${c.count}\n`;
    text += `${name}_sum{${labels}} ${formatG32(c.sum)}\n`;
    return text + `${name}_count{${labels}} ${c.count}\n`;
  }
}
