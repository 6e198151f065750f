// Text and JSON renderings of GET /stats. Pure: a snapshot in, chunks of bytes out, generated
// lazily so that the admin server can stream them (see chunk_buffer.ts).

import { ChunkBuffer } from './chunk_buffer';
import { formatShortest } from './number_format';
import type { HistogramSample, HistogramSummary, ScalarList, StatsSnapshot } from '../../stats/sample';

/** What a compiled `?filter=` offers the renderers: a partial match on the full name. */
export interface NameFilter {
  search(name: string): boolean;
}

export interface StatsQuery {
  readonly usedOnly: boolean;
  readonly filter: NameFilter | null;
}

/** Whether /stats lists a stat: used when asked, matching the filter when given. */
export function isSelected(name: string, used: boolean, q: StatsQuery): boolean {
  return (!q.usedOnly || used) && (q.filter === null || q.filter.search(name));
}

/** isSelected() for a counter or gauge, whose name is decoded only for a filter. */
export function isScalarSelected(scalars: ScalarList, i: number, q: StatsQuery): boolean {
  return (!q.usedOnly || scalars.used(i)) && (q.filter === null || q.filter.search(scalars.name(i)));
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
export function* renderStatsText(snapshot: StatsSnapshot, q: StatsQuery): Generator<Buffer> {
  const out = new ChunkBuffer();
  const scalars = snapshot.scalars;
  for (let i = 0; i < scalars.length; i++) {
    if (isScalarSelected(scalars, i, q)) {
      out.name(scalars, i);
      out.text(': ');
      out.number(scalars.value(i));
      out.text('\n');
    }
    if (out.step()) yield out.take();
  }
  for (const h of snapshot.histograms) {
    if (isSelected(h.name, h.used, q)) out.text(`${h.name}: ${quantileSummary(h)}\n`);
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
export function* renderStatsJson(snapshot: StatsSnapshot, q: StatsQuery): Generator<Buffer> {
  const out = new ChunkBuffer();
  out.text('{"stats":[');
  let listed = 0;
  const scalars = snapshot.scalars;
  for (let i = 0; i < scalars.length; i++) {
    if (isScalarSelected(scalars, i, q)) {
      out.text(listed++ === 0 ? '{"name":' : ',{"name":');
      if (!out.jsonName(scalars, i)) out.jsonString(scalars.name(i));
      out.text(',"value":');
      out.number(scalars.value(i));
      out.text('}');
    }
    if (out.step()) yield out.take();
  }
  let histograms = 0;
  for (const h of snapshot.histograms) {
    if (isSelected(h.name, h.used, q)) {
      if (histograms++ === 0) {
        const supported = JSON.stringify(JSON_QUANTILES.map((quantile) => quantile * 100));
        out.text(`${listed > 0 ? ',' : ''}{"histograms":{"supported_quantiles":${supported},"computed_quantiles":[`);
      } else {
        out.text(',');
      }
      out.text(jsonHistogram(h));
    }
    if (out.step()) yield out.take();
  }
  if (histograms > 0) out.text(']}}');
  out.text(']}');
  yield out.take();
}
