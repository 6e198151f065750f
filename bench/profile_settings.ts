// What `make bench-profile` is asked: which row's proxy to profile, with which HTTP filters before
// its router, how many entries to list and where to write them. Pure: the environment in.

import { join } from 'node:path';
import { type BenchHttpFilter, parseBenchHttpFilters } from './proxy_config';
import { BenchSettingsError, readLoadSettings, type LoadSettings } from './settings';

/**
 * features: `make bench`'s features row (HTTP/1.1); paced: the same proxy under the paced row's
 * moderate load; http: route and router only; h2 and h2-post: HTTP/2 downstream under h2load,
 * GETs or 100-byte POSTs; tls: route and router behind TLS termination (keep-alive); tcp: tcp_proxy
 * under wrk.
 */
export const PROFILE_ROWS = ['features', 'paced', 'http', 'h2', 'h2-post', 'tls', 'tcp'] as const;
export type ProfileRow = (typeof PROFILE_ROWS)[number];

export interface ProfileSettings {
  readonly load: LoadSettings;
  /** PROFILE_ROW; features when unset. */
  readonly row: ProfileRow;
  /** PROFILE_FILTERS=<name,...>: these HTTP filters, configured to act on no request, run before the router. */
  readonly filters: readonly BenchHttpFilter[];
  /** PROFILE_TOP: how many self-time entries are listed; 30 when unset. */
  readonly top: number;
  /** PROFILE_OUT; else bench/l7_profile.txt for the features row, bench/l7_profile.<row>.txt for another. */
  readonly out: string;
}

const DEFAULT_TOP = 30;

export function readProfileSettings(env: Readonly<Record<string, string | undefined>>, repoRoot: string): ProfileSettings {
  const row = parseRow(env.PROFILE_ROW);
  return {
    load: readLoadSettings(env),
    row,
    filters: parseBenchHttpFilters(env.PROFILE_FILTERS, (message) => new BenchSettingsError(`PROFILE_FILTERS: ${message}`)),
    top: env.PROFILE_TOP ? parseTop(env.PROFILE_TOP) : DEFAULT_TOP,
    out: env.PROFILE_OUT ?? join(repoRoot, 'bench', row === 'features' ? 'l7_profile.txt' : `l7_profile.${row}.txt`),
  };
}

function parseRow(text: string | undefined): ProfileRow {
  if (text === undefined || text.trim() === '') return 'features';
  const row = text.trim();
  if (!(PROFILE_ROWS as readonly string[]).includes(row)) throw new BenchSettingsError(`PROFILE_ROW must be one of ${PROFILE_ROWS.join(', ')}, got '${text}'`);
  return row as ProfileRow;
}

function parseTop(text: string): number {
  const top = /^\d+$/.test(text.trim()) ? Number(text) : 0;
  if (top === 0) throw new BenchSettingsError(`PROFILE_TOP must be a positive whole number, got '${text}'`);
  return top;
}
