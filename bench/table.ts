// The printed reports: one table per group of rows, and the layout every benchmark table shares.
// Pure formatting, so its layout is tested.

import type { Ratios, RowSummary } from './summary';

export type RowOutcome =
  | { readonly kind: 'measured'; readonly summary: RowSummary; readonly ratios: Ratios }
  | { readonly kind: 'failed'; readonly error: string };

export interface TableRow {
  readonly label: string;
  readonly outcome: RowOutcome;
}

export interface Column {
  readonly header: string;
  readonly align: 'left' | 'right';
}

/** A line of a table: its cells, or a failed row's label and error. */
export type TableLine =
  | { readonly kind: 'cells'; readonly cells: readonly string[] }
  | { readonly kind: 'failed'; readonly label: string; readonly error: string };

const COLUMNS: readonly Column[] = [
  { header: 'row', align: 'left' },
  { header: 'req/s', align: 'right' },
  { header: 'p50', align: 'right' },
  { header: 'p99', align: 'right' },
  { header: 'CPU us/req', align: 'right' },
  { header: 'req/s vs nginx', align: 'right' },
  { header: 'CPU vs nginx', align: 'right' },
  { header: 'errors', align: 'left' },
];

const INDENT = '  ';
const GAP = '  ';

export function formatGroupTable(title: string, rows: readonly TableRow[]): string {
  const lines = rows.map(({ label, outcome }): TableLine =>
    outcome.kind === 'measured' ? { kind: 'cells', cells: cells(label, outcome) } : { kind: 'failed', label, error: outcome.error },
  );
  return formatTable(title, COLUMNS, lines);
}

/** The title, then the headers and the lines, each column as wide as its widest cell. */
export function formatTable(title: string, columns: readonly Column[], lines: readonly TableLine[]): string {
  const headers = columns.map((column) => column.header);
  const measured = lines.flatMap((line) => (line.kind === 'cells' ? [line.cells] : []));
  // Failed rows have a label and no other cell, so only the label column measures them.
  const labels = lines.flatMap((line) => (line.kind === 'failed' ? [line.label.length] : []));
  const widths = columns.map((_, index) =>
    Math.max(...[headers, ...measured].map((cells) => (cells[index] as string).length), ...(index === 0 ? labels : [])),
  );
  const render = (cells: readonly string[]): string =>
    INDENT +
    cells
      .map((cell, index) => {
        const width = widths[index] as number;
        return columns[index]?.align === 'right' ? cell.padStart(width) : cell.padEnd(width);
      })
      .join(GAP)
      .trimEnd();
  const body = lines.map((line) =>
    line.kind === 'cells'
      ? render(line.cells)
      : // A failed row keeps its place; its message is not squeezed into the columns.
        `${INDENT}${line.label.padEnd(widths[0] as number)}${GAP}failed: ${firstLine(line.error)}`,
  );
  return [title, render(headers), ...body].join('\n');
}

function cells(label: string, { summary, ratios }: { summary: RowSummary; ratios: Ratios }): string[] {
  return [
    label,
    formatCount(summary.requestsPerSecond),
    summary.p50Us === null ? '-' : formatLatency(summary.p50Us),
    summary.p99Us === null ? '-' : formatLatency(summary.p99Us),
    summary.cpuUsPerRequest === null ? '-' : summary.cpuUsPerRequest.toFixed(1),
    formatRatio(ratios.requestsPerSecond),
    formatRatio(ratios.cpuPerRequest),
    formatErrors(summary),
  ];
}

export function formatCount(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** Microseconds in the unit that keeps three significant digits readable: 806us, 1.01ms, 2.10s. */
export function formatLatency(us: number): string {
  if (us < 1e3) return `${Math.round(us)}us`;
  if (us < 1e6) return `${(us / 1e3).toFixed(2)}ms`;
  return `${(us / 1e6).toFixed(2)}s`;
}

export function formatRatio(ratio: number | null): string {
  return ratio === null ? '-' : `${ratio.toFixed(2)}x`;
}

/** Failed requests are part of the result: a proxy that answers 503 quickly is not fast. */
export function formatErrors(summary: RowSummary): string {
  const parts: string[] = [];
  if (summary.errorResponses > 0) parts.push(`status>=400 ${summary.errorResponses}`);
  for (const [kind, count] of Object.entries(summary.socketErrors)) {
    if (count > 0) parts.push(`${kind} ${count}`);
  }
  return parts.length === 0 ? 'none' : parts.join(', ');
}

export interface Failure {
  /** Which row, e.g. `http-16k / proxy`. */
  readonly row: string;
  readonly error: string;
}

/**
 * Full error texts, once each: a subject that fails to start fails all its rows with the same
 * error, and its log tail is worth reading once, not once per row.
 */
export function formatFailures(failures: readonly Failure[]): string {
  const rowsByError = new Map<string, string[]>();
  for (const failure of failures) {
    rowsByError.set(failure.error, [...(rowsByError.get(failure.error) ?? []), failure.row]);
  }
  const sections = [...rowsByError].map(([error, rows]) => {
    const [headline, ...details] = error.split('\n');
    return [`${INDENT}${rows.join(', ')}: ${headline}`, ...details.map((line) => `${INDENT}${INDENT}${line}`)].join('\n');
  });
  return ['Failed rows', ...sections].join('\n');
}

export function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? '';
}
