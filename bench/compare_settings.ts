// What `make bench-compare BASE=<rev>` is asked: the revision to compare the checkout with, and
// how many rounds; each round's load is `make bench`'s (BENCH_DURATION).

import { type BenchHttpFilter, parseBenchHttpFilters } from './proxy_config';
import { readLoadSettings, type LoadSettings } from './settings';

export interface CompareSettings {
  readonly load: LoadSettings;
  /** Rounds per row; in each, both builds run once. */
  readonly rounds: number;
  /** COMPARE_HEAD_ACCESS_LOG=1: HEAD's proxy writes a file access log, BASE's does not; with BASE=HEAD the ratio is logging's cost. */
  readonly headAccessLog: boolean;
  /**
   * COMPARE_HEAD_ROUTES=<n>: HEAD's proxy routes through a table of n routes whose last one matches,
   * BASE's through one route; with BASE=HEAD the ratio is route matching's cost. 1 when unset.
   */
  readonly headRoutes: number;
  /**
   * COMPARE_HEAD_FILTERS=<name,...>: HEAD's L7 rows run these HTTP filters, configured to act on
   * no request of the bench (BENCH_HTTP_FILTERS), before the router; BASE's the router alone. With
   * BASE=HEAD the ratio is what the inactive filters cost. Empty when unset.
   */
  readonly headFilters: readonly BenchHttpFilter[];
  /** COMPARE_HEAD=<rev>: HEAD is that revision, built in a worktree of its own, not this checkout (for bisecting). */
  readonly headRevision: string | null;
  /** COMPARE_ROWS=<group,...>: the rows measured, of COMPARED_GROUPS (http, http-16k and tcp when unset). */
  readonly rows: readonly ComparedGroup[];
}

/** `make bench`'s groups of our proxy on the data path that can be compared: HTTP/1.1 with either body, tcp_proxy, HTTP/2 downstream (GETs, POSTs), TLS termination (keep-alive). */
export const COMPARED_GROUPS = ['http', 'http-16k', 'tcp', 'h2', 'h2-post', 'tls'] as const;
export type ComparedGroup = (typeof COMPARED_GROUPS)[number];
/** Measured when COMPARE_ROWS is unset: the rows every data path change is compared on. */
const DEFAULT_GROUPS: readonly ComparedGroup[] = ['http', 'http-16k', 'tcp'];

export class CompareUsageError extends Error {
  override readonly name = 'CompareUsageError';
}

const DEFAULT_ROUNDS = 6;

const USAGE = 'usage: node dist/bench/compare.js <revision>   (or: make bench-compare BASE=<revision>)';

/** The command line: exactly one revision, which must not read as an option to git. */
export function parseCompareArgs(argv: readonly string[]): string {
  const [revision, ...rest] = argv;
  if (revision === undefined || revision.trim() === '' || rest.length > 0) throw new CompareUsageError(USAGE);
  return parseRevision(revision);
}

function parseRevision(revision: string): string {
  if (revision.startsWith('-')) throw new CompareUsageError(`'${revision}' is not a revision\n${USAGE}`);
  return revision;
}

/** Reads COMPARE_ROUNDS (a positive whole number; 6 when unset), COMPARE_HEAD_ACCESS_LOG (0 or 1), COMPARE_HEAD_ROUTES, COMPARE_HEAD_FILTERS, COMPARE_ROWS and BENCH_DURATION. */
export function readCompareSettings(env: Readonly<Record<string, string | undefined>>): CompareSettings {
  return {
    load: readLoadSettings(env),
    rounds: env.COMPARE_ROUNDS ? parsePositive('COMPARE_ROUNDS', env.COMPARE_ROUNDS) : DEFAULT_ROUNDS,
    headRoutes: env.COMPARE_HEAD_ROUTES ? parsePositive('COMPARE_HEAD_ROUTES', env.COMPARE_HEAD_ROUTES) : 1,
    headAccessLog: parseSwitch('COMPARE_HEAD_ACCESS_LOG', env.COMPARE_HEAD_ACCESS_LOG),
    headFilters: parseBenchHttpFilters(env.COMPARE_HEAD_FILTERS, (message) => new CompareUsageError(`COMPARE_HEAD_FILTERS: ${message}`)),
    headRevision: env.COMPARE_HEAD ? parseRevision(env.COMPARE_HEAD) : null,
    rows: parseRows(env.COMPARE_ROWS),
  };
}

function parseRows(text: string | undefined): readonly ComparedGroup[] {
  if (text === undefined || text.trim() === '') return DEFAULT_GROUPS;
  const rows = text.split(',').map((name) => {
    const row = name.trim();
    if (!(COMPARED_GROUPS as readonly string[]).includes(row)) throw new CompareUsageError(`COMPARE_ROWS: '${row}' is not one of ${COMPARED_GROUPS.join(', ')}`);
    return row as ComparedGroup;
  });
  // In the order the table always has them.
  return COMPARED_GROUPS.filter((group) => rows.includes(group));
}

function parseSwitch(name: string, text: string | undefined): boolean {
  if (text === undefined || text === '' || text === '0') return false;
  if (text === '1') return true;
  throw new CompareUsageError(`${name} must be 0 or 1, got '${text}'`);
}

function parsePositive(name: string, text: string): number {
  const value = /^\d+$/.test(text.trim()) ? Number(text) : 0;
  if (value === 0) throw new CompareUsageError(`${name} must be a positive whole number, got '${text}'`);
  return value;
}
