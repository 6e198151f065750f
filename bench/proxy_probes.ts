// What the scale benchmarks ask a running proxy: its workers, a statistic, and waiting for a
// condition.

import * as fs from 'node:fs';
import { fetchOnce } from './http_probe';

/** The proxy's worker processes: the children of its supervisor. */
export function childrenOf(pid: number): number[] {
  return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

export async function stat(adminPort: number, name: string): Promise<number | undefined> {
  const r = await fetchOnce(adminPort, `/stats?format=json&filter=${encodeURIComponent(`^${name}$`)}`);
  return (JSON.parse(r.body) as { stats: { name: string; value: number }[] }).stats.find((s) => s.name === name)?.value;
}

/** `intervalMs` keeps a probe that costs the proxy work (a /stats render) from slowing what it measures. */
export async function until(what: string, deadline: number, probe: () => Promise<boolean>, intervalMs = 10): Promise<number> {
  for (;;) {
    if (await probe().catch(() => false)) return performance.now();
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
