// The printed A/B comparison: one line per row with both builds' CPU per request and HEAD/BASE.
// Pure formatting, so its layout is tested.

import type { Comparison, Spread } from './ab_summary';
import { formatCount, formatErrors, formatTable, type Column, type TableLine } from './table';

export interface ComparedRow {
  readonly label: string;
  readonly outcome: { readonly kind: 'compared'; readonly comparison: Comparison } | { readonly kind: 'failed'; readonly error: string };
}

const COLUMNS: readonly Column[] = [
  { header: 'row', align: 'left' },
  { header: 'BASE us/req', align: 'right' },
  { header: 'HEAD us/req', align: 'right' },
  { header: 'HEAD/BASE', align: 'right' },
  { header: 'per-round HEAD/BASE', align: 'right' },
  { header: 'min HEAD/BASE', align: 'right' },
  { header: 'BASE req/s', align: 'right' },
  { header: 'HEAD req/s', align: 'right' },
  { header: 'errors', align: 'left' },
];

export function formatComparison(rounds: number, rows: readonly ComparedRow[]): string {
  const title = [
    `CPU us per request of the proxy under test: median (min-max) over ${rounds} round${rounds === 1 ? '' : 's'}`,
    "HEAD/BASE: the ratio of the medians; per round: the median (min-max) of each round's ratio; min: the ratio of the cheapest rounds. Below 1, HEAD is cheaper",
  ].join('\n');
  const lines = rows.map(({ label, outcome }): TableLine =>
    outcome.kind === 'compared' ? { kind: 'cells', cells: cells(label, outcome.comparison) } : { kind: 'failed', label, error: outcome.error },
  );
  return formatTable(title, COLUMNS, lines);
}

function cells(label: string, { base, head, ratioOfMedians, roundRatios, ratioOfMinima }: Comparison): string[] {
  const baseErrors = formatErrors(base.summary);
  const headErrors = formatErrors(head.summary);
  return [
    label,
    formatSpread(base.cpu, 1),
    formatSpread(head.cpu, 1),
    formatChange(ratioOfMedians),
    formatSpread(roundRatios, 3),
    ratioOfMinima.toFixed(3),
    formatCount(base.summary.requestsPerSecond),
    formatCount(head.summary.requestsPerSecond),
    // Failed requests void a row's figures: a build that answers 503 quickly is not cheaper.
    baseErrors === 'none' && headErrors === 'none' ? 'none' : `BASE ${baseErrors}; HEAD ${headErrors}`,
  ];
}

/** `21.3 (20.9-22.0)` */
export function formatSpread(spread: Spread, decimals: number): string {
  return `${spread.median.toFixed(decimals)} (${spread.min.toFixed(decimals)}-${spread.max.toFixed(decimals)})`;
}

/** A ratio with its change in percent: `0.977 (-2.3%)`, `1.031 (+3.1%)`. */
export function formatChange(ratio: number): string {
  // Rounded first, so that a change too small to show reads 0.0%, never -0.0%.
  const percent = Math.round((ratio - 1) * 1000) / 10 || 0;
  return `${ratio.toFixed(3)} (${percent > 0 ? '+' : ''}${percent.toFixed(1)}%)`;
}
