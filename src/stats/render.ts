// Text and JSON renderings of GET /stats. Pure: samples in, body out.

import type { SafeRegex } from '../regex/safe_regex';
import type { ScalarSample } from './sample';

export interface StatsQuery {
  readonly usedOnly: boolean;
  /** RE2 regex searched anywhere in the name (Envoy's regex_search). */
  readonly filter: SafeRegex | null;
}

/** The stats /stats shows: used when asked, matching the filter, in the snapshot's name order. */
export function selectStats(samples: readonly ScalarSample[], q: StatsQuery): ScalarSample[] {
  return samples.filter((s) => (!q.usedOnly || s.used) && (q.filter === null || q.filter.search(s.name)));
}

/** `name: value` per line; counters and gauges share one name-sorted list. */
export function renderStatsText(selected: readonly ScalarSample[]): string {
  let out = '';
  for (const s of selected) out += `${s.name}: ${s.value}\n`;
  return out;
}

/** Envoy's compact JSON: `{"stats":[{"name":..,"value":..},...]}` with no trailing newline. */
export function renderStatsJson(selected: readonly ScalarSample[]): string {
  return JSON.stringify({ stats: selected.map((s) => ({ name: s.name, value: s.value })) });
}
