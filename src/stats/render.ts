// Text and JSON renderings of GET /stats. Pure: a snapshot in, string chunks out, generated
// lazily so that the admin server can stream them (see chunk_buffer.ts).

import { ChunkBuffer } from './chunk_buffer';
import { formatShortest } from './number_format';
import type { HistogramSample, HistogramSummary, StatsSnapshot } from './sample';

/** What a compiled `?filter=` offers the renderers: a partial match on the full name. */
export interface NameFilter {
  search(name: string): boolean;
}

export interface StatsQuery {
  readonly usedOnly: boolean;
  readonly filter: NameFilter | null;
}

/** Whether /stats lists a stat: used when asked, matching the filter when given. */
export function isSelected(stat: { readonly name: string; readonly used: boolean }, q: StatsQuery): boolean {
  return (!q.usedOnly || stat.used) && (q.filter === null || q.filter.search(stat.name));
}

/** The quantiles of the text form; the JSON form adds P95. */
const TEXT_QUANTILES = [0, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1];
const JSON_QUANTILES = [0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1];

function intervalQuantile(h: HistogramSample, q: number): number {
  return h.interval === null ? NaN : h.interval.quantile(q);
}

/** `P0(interval,cumulative) P25(..) ...`, or `No recorded values` for a histogram never written. */
function quantileSummary(h: HistogramSample): string {
  if (!h.used) return 'No recorded values';
  return TEXT_QUANTILES.map(
    (q) => `P${q * 100}(${formatShortest(intervalQuantile(h, q))},${formatShortest(h.cumulative.quantile(q))})`,
  ).join(' ');
}

/**
 * Counters and gauges in one name-sorted list of `name: value` lines, then histograms, each
 * `name: P0(interval,cumulative) ... P100(..)`.
 */
export function* renderStatsText(snapshot: StatsSnapshot, q: StatsQuery): Generator<string> {
  const out = new ChunkBuffer();
  for (const s of snapshot.scalars) {
    if (isSelected(s, q)) out.add(`${s.name}: ${s.value}\n`);
    if (out.step()) yield out.take();
  }
  for (const h of snapshot.histograms) {
    if (isSelected(h, q)) out.add(`${h.name}: ${quantileSummary(h)}\n`);
    if (out.step()) yield out.take();
  }
  yield out.take();
}

/** A quantile as JSON: NaN (no samples) is null, as Envoy writes it. */
function jsonQuantile(summary: HistogramSummary | null, q: number): string {
  const value = summary === null ? NaN : summary.quantile(q);
  return Number.isNaN(value) ? 'null' : JSON.stringify(value);
}

function jsonHistogram(h: HistogramSample): string {
  const values = JSON_QUANTILES.map(
    (q) => `{"interval":${jsonQuantile(h.interval, q)},"cumulative":${jsonQuantile(h.cumulative, q)}}`,
  );
  return `{"name":${JSON.stringify(h.name)},"values":[${values.join(',')}]}`;
}

/**
 * Envoy's compact JSON, no trailing newline: `{"stats":[{"name":..,"value":..},...]}`, and when
 * any histogram is selected a last element `{"histograms":{"supported_quantiles":[..],
 * "computed_quantiles":[{"name":..,"values":[{"interval":..,"cumulative":..},..]},..]}}`.
 */
/** Stat names rarely need escaping: test for it rather than run JSON.stringify on each. */
const NEEDS_JSON_ESCAPE = /["\\\u0000-\u001f]/;

function jsonString(name: string): string {
  return NEEDS_JSON_ESCAPE.test(name) ? JSON.stringify(name) : `"${name}"`;
}

export function* renderStatsJson(snapshot: StatsSnapshot, q: StatsQuery): Generator<string> {
  const out = new ChunkBuffer();
  out.add('{"stats":[');
  let separator = '';
  for (const s of snapshot.scalars) {
    if (isSelected(s, q)) {
      out.add(`${separator}{"name":${jsonString(s.name)},"value":${s.value}}`);
      separator = ',';
    }
    if (out.step()) yield out.take();
  }
  let histograms = 0;
  for (const h of snapshot.histograms) {
    if (isSelected(h, q)) {
      if (histograms++ === 0) {
        const supported = JSON.stringify(JSON_QUANTILES.map((quantile) => quantile * 100));
        out.add(`${separator}{"histograms":{"supported_quantiles":${supported},"computed_quantiles":[`);
      } else {
        out.add(',');
      }
      out.add(jsonHistogram(h));
    }
    if (out.step()) yield out.take();
  }
  if (histograms > 0) out.add(']}}');
  out.add(']}');
  yield out.take();
}
