// The targets `make bench` reports on, each from rows of the same run: our proxy's CPU per
// request over nginx's doing the same, and at a moderate paced load the latency our hop adds
// against nginx's. Pure: the run's rows in, one line per target out.

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

/** The paced group: its latency targets compare our proxy's row with nginx's and the upstream's. */
export const PACED_GROUP = 'http-paced';
/** The p50 our hop adds may exceed nginx's by at most this much. */
const ADDED_P50_SLACK_US = 100;
/** Our p99 over nginx's, at most. */
const P99_LIMIT = 1.5;

/** A row of the run; null where it was not measured (BENCH_ONLY, a failed row, a generator without percentiles). */
export interface MeasuredRow {
  readonly group: string;
  readonly subject: Subject;
  /** CPU per request over nginx's in the same group. */
  readonly cpuPerRequest: number | null;
  readonly p50Us: number | null;
  readonly p99Us: number | null;
}

/** One target's line: what was measured, as the table prints it, and whether it holds; null when not measured. */
export interface TargetOutcome {
  readonly what: string;
  readonly measured: string;
  readonly limit: string;
  readonly met: boolean | null;
}

export function judgeTargets(rows: readonly MeasuredRow[], targets: readonly CpuTarget[] = CPU_TARGETS): TargetOutcome[] {
  const find = (group: string, subject: Subject) => rows.find((r) => r.group === group && r.subject === subject);
  const cpu = targets.map((target): TargetOutcome => {
    const ratio = find(target.group, target.subject)?.cpuPerRequest ?? null;
    return { what: `${target.what}: CPU vs nginx`, measured: formatRatio(ratio), limit: formatRatio(target.limit), met: ratio === null ? null : ratio <= target.limit };
  });
  const [direct, nginx, proxy] = (['direct', 'nginx', 'proxy'] as const).map((subject) => find(PACED_GROUP, subject));
  const p50 = (row: MeasuredRow | undefined) => row?.p50Us ?? null;
  const p99 = (row: MeasuredRow | undefined) => row?.p99Us ?? null;
  const [d50, n50, o50] = [p50(direct), p50(nginx), p50(proxy)];
  // What each hop adds to the upstream's own p50; ours against nginx's.
  const extra = d50 === null || n50 === null || o50 === null ? null : o50 - d50 - (n50 - d50);
  const [n99, o99] = [p99(nginx), p99(proxy)];
  const p99Ratio = n99 === null || o99 === null || n99 === 0 ? null : o99 / n99;
  return [
    ...cpu,
    {
      what: 'paced load: p50 our hop adds, over what nginx adds',
      measured: extra === null ? '-' : `${extra >= 0 ? '+' : ''}${(extra / 1000).toFixed(3)} ms`,
      limit: `+${(ADDED_P50_SLACK_US / 1000).toFixed(3)} ms`,
      met: extra === null ? null : extra <= ADDED_P50_SLACK_US,
    },
    { what: 'paced load: p99 vs nginx', measured: formatRatio(p99Ratio), limit: formatRatio(P99_LIMIT), met: p99Ratio === null ? null : p99Ratio <= P99_LIMIT },
  ];
}

const COLUMNS: readonly Column[] = [
  { header: 'target', align: 'left' },
  { header: 'measured', align: 'right' },
  { header: 'at most', align: 'right' },
  { header: 'verdict', align: 'left' },
];

export function formatTargets(outcomes: readonly TargetOutcome[]): string {
  const lines = outcomes.map(({ what, measured, limit, met }): TableLine => ({
    kind: 'cells',
    cells: [what, measured, limit, met === null ? 'not measured' : met ? 'met' : 'not met'],
  }));
  return formatTable('The targets (ours against nginx doing the same, in this run)', COLUMNS, lines);
}
