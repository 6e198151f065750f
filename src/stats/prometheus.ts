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
import { isSelected, StatsQuery } from './render';
import type { HistogramSample, ScalarSample, StatsSnapshot } from './sample';
import type { TagExtractor } from './tag_extractor';

interface Group<T> {
  /** Label text per stat, parallel to stats. */
  readonly labels: string[];
  readonly stats: T[];
}

type Groups<T> = Map<string, Group<T>>;

function scalarLine(name: string, labels: string, s: ScalarSample): string {
  return `${name}{${labels}} ${s.value}\n`;
}

function* writeGroups<T>(
  groups: Groups<T>,
  type: string,
  out: ChunkBuffer,
  lines: (name: string, labels: string, stat: T) => string,
): Generator<string> {
  for (const name of [...groups.keys()].sort()) {
    const group = groups.get(name)!;
    out.add(`# TYPE ${name} ${type}\n`);
    for (let i = 0; i < group.stats.length; i++) {
      out.add(lines(name, group.labels[i]!, group.stats[i]!));
      if (out.step()) yield out.take();
    }
    out.add('\n');
  }
}

export class PrometheusFormatter {
  constructor(
    private readonly names: TagExtractor,
    private readonly buckets: HistogramBucketSettings,
  ) {}

  *render(snapshot: StatsSnapshot, q: StatsQuery): Generator<string> {
    const out = new ChunkBuffer();
    const counters: Groups<ScalarSample> = new Map();
    const gauges: Groups<ScalarSample> = new Map();
    for (const s of snapshot.scalars) {
      if (isSelected(s, q)) this.addTo(s.kind === 'counter' ? counters : gauges, s);
      if (out.step()) yield out.take();
    }
    const histograms: Groups<HistogramSample> = new Map();
    for (const h of snapshot.histograms) {
      if (isSelected(h, q)) this.addTo(histograms, h);
      if (out.step()) yield out.take();
    }
    yield* writeGroups(counters, 'counter', out, scalarLine);
    yield* writeGroups(gauges, 'gauge', out, scalarLine);
    yield* writeGroups(histograms, 'histogram', out, (name, labels, h) => this.histogramLines(name, labels, h));
    yield out.take();
  }

  private addTo<T extends { readonly name: string; readonly id?: number }>(groups: Groups<T>, stat: T): void {
    const { name, labels } = this.names.prometheusName(stat.name, stat.id);
    let group = groups.get(name);
    if (group === undefined) {
      group = { labels: [], stats: [] };
      groups.set(name, group);
    }
    group.labels.push(labels);
    group.stats.push(stat);
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
