// Text and JSON renderings of GET /stats. Pure: samples in, body out.

import type { SafeRegex } from '../regex/safe_regex';
import type { StatSample } from './reader';

export interface StatsQuery {
  readonly usedOnly: boolean;
  /** RE2 regex searched anywhere in the name (Envoy's regex_search). */
  readonly filter: SafeRegex | null;
}

/** The stats /stats shows: not hidden, used when asked, matching the filter, sorted by name. */
export function selectStats(samples: readonly StatSample[], q: StatsQuery): StatSample[] {
  return samples
    .filter((s) => !s.hidden && (!q.usedOnly || s.used) && (q.filter === null || q.filter.search(s.name)))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** `name: value` per line; counters and gauges share one name-sorted list. */
export function renderStatsText(selected: readonly StatSample[]): string {
  let out = '';
  for (const s of selected) out += `${s.name}: ${s.value}\n`;
  return out;
}

/** Envoy's compact JSON: `{"stats":[{"name":..,"value":..},...]}` with no trailing newline. */
export function renderStatsJson(selected: readonly StatSample[]): string {
  return JSON.stringify({ stats: selected.map((s) => ({ name: s.name, value: s.value })) });
}
