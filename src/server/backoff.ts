// Restart backoff for crashed workers: doubles from `initialMs` up to `maxMs`, and starts
// over once a worker has stayed up for `stableMs`, so one crash long ago does not slow the next.

export interface BackoffPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
  readonly stableMs: number;
}

export const WORKER_RESTART_BACKOFF: BackoffPolicy = { initialMs: 100, maxMs: 10_000, stableMs: 30_000 };

/** Delay before the next start, given the previous delay and how long the worker lived. */
export function nextRestartDelay(policy: BackoffPolicy, previousDelayMs: number, livedMs: number): number {
  if (previousDelayMs === 0 || livedMs >= policy.stableMs) return policy.initialMs;
  return Math.min(policy.maxMs, previousDelayMs * 2);
}
