// Envoy's ClusterTimeoutBudgetStats (track_timeout_budgets): how much of its timeouts each
// request used, in percent, so that operators can see how close timeouts are to biting.

import type { Histogram, Scope } from '../../stats/stats';

export const TIMEOUT_BUDGET_HISTOGRAMS = ['upstream_rq_timeout_budget_percent_used', 'upstream_rq_timeout_budget_per_try_percent_used'] as const;

export class TimeoutBudgetStats {
  readonly percentUsed: Histogram;
  readonly perTryPercentUsed: Histogram;

  constructor(scope: Scope) {
    this.percentUsed = scope.histogram(TIMEOUT_BUDGET_HISTOGRAMS[0], 'unspecified');
    this.perTryPercentUsed = scope.histogram(TIMEOUT_BUDGET_HISTOGRAMS[1], 'unspecified');
  }
}

/** Envoy's FilterUtility::percentageOfTimeout: a timeout of 0 is infinite, and none of it is ever used. */
export function percentageOfTimeout(elapsedMs: number, timeoutMs: number): number {
  return timeoutMs === 0 ? 0 : Math.floor((Math.floor(elapsedMs) * 100) / timeoutMs);
}
