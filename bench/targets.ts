// The CPU targets `make bench` reports on: our proxy's CPU per request over nginx's, doing the
// same, in one run. Pure: the run's rows in, one line per target out.

import type { Subject } from './plan';
import { type Column, formatRatio, formatTable, type TableLine } from './table';

export interface CpuTarget {
  readonly what: string;
  readonly group: string;
  readonly subject: Subject;
  /** The most our CPU per request may be, as a multiple of nginx's in the same group. */
  readonly limit: number;
}

export const CPU_TARGETS: readonly CpuTarget[] = [
  { what: "HTTP/1.1 13 B, operator's features", group: 'http', subject: 'proxy-features', limit: 1.5 },
  { what: "HTTP/1.1 16 KiB, operator's features", group: 'http-16k', subject: 'proxy-features', limit: 1.5 },
  { what: 'TCP proxy (vs nginx stream)', group: 'tcp', subject: 'proxy', limit: 1.2 },
  { what: 'HTTP/2 downstream', group: 'h2', subject: 'proxy', limit: 2 },
  { what: 'TLS termination, keep-alive', group: 'tls', subject: 'proxy', limit: 2 },
];

/** A row of the run: its CPU per request over nginx's, null when either was not measured. */
export interface MeasuredRatio {
  readonly group: string;
  readonly subject: Subject;
  readonly cpuPerRequest: number | null;
}

export interface TargetOutcome {
  readonly target: CpuTarget;
  /** Null: the run did not measure the row (BENCH_ONLY), or it or nginx's failed. */
  readonly ratio: number | null;
}

export function judgeTargets(rows: readonly MeasuredRatio[], targets: readonly CpuTarget[] = CPU_TARGETS): TargetOutcome[] {
  return targets.map((target) => {
    const row = rows.find((r) => r.group === target.group && r.subject === target.subject);
    return { target, ratio: row?.cpuPerRequest ?? null };
  });
}

const COLUMNS: readonly Column[] = [
  { header: 'target', align: 'left' },
  { header: 'CPU vs nginx', align: 'right' },
  { header: 'at most', align: 'right' },
  { header: 'verdict', align: 'left' },
];

export function formatTargets(outcomes: readonly TargetOutcome[]): string {
  const lines = outcomes.map(({ target, ratio }): TableLine => ({
    kind: 'cells',
    cells: [target.what, formatRatio(ratio), `${target.limit.toFixed(2)}x`, ratio === null ? 'not measured' : ratio <= target.limit ? 'met' : 'not met'],
  }));
  return formatTable('CPU per request against the targets (ours over nginx doing the same)', COLUMNS, lines);
}
