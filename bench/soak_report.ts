// What `make soak` prints: the requests (failed ones told apart by whether a worker had just been
// killed), each process's memory and descriptors over time, and the hot restarts' times. Pure.

import type { Failure } from './soak_load';
import { median } from './summary';

/** One process of the proxy when sampled. */
export interface ProcessSample {
  /** `supervisor` or `worker`, of the newest epoch or an older one still draining. */
  readonly role: 'supervisor' | 'worker';
  readonly newest: boolean;
  readonly pid: number;
  readonly rssKiB: number;
  readonly fds: number;
}

export interface Sample {
  readonly atMs: number;
  readonly processes: readonly ProcessSample[];
}

export interface FailureSplit {
  /** Within `windowMs` after a worker was killed: its in-flight requests, which the soak allows. */
  readonly afterKill: number;
  readonly other: number;
  /** Each reason and how often, most frequent first. */
  readonly reasons: readonly (readonly [string, number])[];
}

export function splitFailures(failures: readonly Failure[], killsAtMs: readonly number[], windowMs: number): FailureSplit {
  let afterKill = 0;
  const reasons = new Map<string, number>();
  for (const failure of failures) {
    if (killsAtMs.some((kill) => failure.atMs >= kill && failure.atMs - kill <= windowMs)) afterKill++;
    reasons.set(failure.reason, (reasons.get(failure.reason) ?? 0) + 1);
  }
  return { afterKill, other: failures.length - afterKill, reasons: [...reasons].sort((a, b) => b[1] - a[1]) };
}

function mib(kib: number): string {
  return (kib / 1024).toFixed(1);
}

/**
 * One line per sample: the newest epoch's supervisor and each of its workers (RSS MiB / open
 * descriptors), then the older epochs still draining, summed.
 */
export function formatCurves(samples: readonly Sample[], workers: number): string {
  const header = ['t (s)', 'supervisor', ...Array.from({ length: workers }, (_, i) => `worker ${i}`), 'older epochs'];
  const rows = samples.map((sample) => {
    const newest = sample.processes.filter((p) => p.newest);
    const supervisor = newest.find((p) => p.role === 'supervisor');
    const newestWorkers = newest.filter((p) => p.role === 'worker').sort((a, b) => a.pid - b.pid);
    const older = sample.processes.filter((p) => !p.newest);
    const cell = (p: ProcessSample | undefined): string => (p === undefined ? '-' : `${mib(p.rssKiB)} MiB / ${p.fds}`);
    const olderCell = older.length === 0 ? '-' : `${older.length} proc, ${mib(older.reduce((sum, p) => sum + p.rssKiB, 0))} MiB / ${older.reduce((sum, p) => sum + p.fds, 0)}`;
    return [(sample.atMs / 1000).toFixed(0), cell(supervisor), ...Array.from({ length: workers }, (_, i) => cell(newestWorkers[i])), olderCell];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string => `  ${cells.map((c, i) => (i === 0 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd()}`;
  return ['RSS / open descriptors per process (the newest epoch; older ones summed)', line(header), ...rows.map(line)].join('\n');
}

export function formatRestarts(msEach: readonly number[]): string {
  if (msEach.length === 0) return 'hot restarts: none';
  const sorted = [...msEach].sort((a, b) => a - b);
  return (
    `hot restarts: ${msEach.length}, SIGHUP to the new epoch serving: median ${median(sorted).toFixed(0)} ms, ` +
    `min ${sorted[0]!.toFixed(0)} ms, max ${sorted[sorted.length - 1]!.toFixed(0)} ms`
  );
}
