// One host's active health check state (Envoy's ActiveHealthCheckSession handleSuccess and
// setUnhealthy), pure: a check's outcome and the host's flags in, the new flags, the kind of
// transition and what the event log records out. The first check's success marks a host healthy
// at once; later it takes healthy_threshold successes in a row. An ACTIVE failure (the host
// answered, badly) ejects at once; NETWORK failures (timeouts, resets) count to unhealthy_threshold.

import { HealthFlag } from '../../shared/health_flags';

export type FailureType = 'ACTIVE' | 'PASSIVE' | 'NETWORK';

export type CheckOutcome = { readonly kind: 'success'; readonly degraded: boolean } | { readonly kind: 'failure'; readonly type: FailureType };

/** Envoy's HealthTransition: the host's health changed, is about to (a threshold is counting), or neither. */
export type HealthTransition = 'Unchanged' | 'Changed' | 'ChangePending';

/** What the event log records of a verdict (HealthCheckEvent's event kinds). */
export type HealthEvent =
  | { readonly kind: 'eject_unhealthy'; readonly failureType: FailureType }
  | { readonly kind: 'health_check_failure'; readonly failureType: FailureType; readonly firstCheck: boolean }
  | { readonly kind: 'add_healthy'; readonly firstCheck: boolean }
  | { readonly kind: 'degraded_healthy_host' }
  | { readonly kind: 'no_longer_degraded_host' };

export interface VerdictCounts {
  readonly firstCheck: boolean;
  readonly numHealthy: number;
  readonly numUnhealthy: number;
}

export const INITIAL_COUNTS: VerdictCounts = { firstCheck: true, numHealthy: 0, numUnhealthy: 0 };

export interface Thresholds {
  readonly healthyThreshold: number;
  readonly unhealthyThreshold: number;
  readonly alwaysLogHealthCheckFailures: boolean;
}

export interface Verdict {
  readonly flags: number;
  readonly counts: VerdictCounts;
  readonly transition: HealthTransition;
  readonly events: readonly HealthEvent[];
}

/** The host's flags and counts after `outcome`; only the active check's bits change. */
export function judge(flags: number, counts: VerdictCounts, outcome: CheckOutcome, thresholds: Thresholds): Verdict {
  return outcome.kind === 'success' ? onSuccess(flags, counts, outcome.degraded, thresholds) : onFailure(flags, counts, outcome.type, thresholds);
}

function onSuccess(flags: number, counts: VerdictCounts, degraded: boolean, thresholds: Thresholds): Verdict {
  const events: HealthEvent[] = [];
  let numHealthy = counts.numHealthy;
  let transition: HealthTransition = 'Unchanged';
  if ((flags & HealthFlag.FAILED_ACTIVE_HC) !== 0) {
    if (counts.firstCheck || ++numHealthy === thresholds.healthyThreshold) {
      flags &= ~HealthFlag.FAILED_ACTIVE_HC;
      transition = 'Changed';
      events.push({ kind: 'add_healthy', firstCheck: counts.firstCheck });
    } else {
      transition = 'ChangePending';
    }
  }
  ({ flags, transition } = clearPending(flags, transition));
  if (degraded !== ((flags & HealthFlag.DEGRADED_ACTIVE_HC) !== 0)) {
    flags ^= HealthFlag.DEGRADED_ACTIVE_HC;
    events.push({ kind: degraded ? 'degraded_healthy_host' : 'no_longer_degraded_host' });
    // A degraded change is a change, unless a pending threshold already says otherwise.
    if (transition === 'Unchanged') transition = 'Changed';
  }
  return { flags, counts: { firstCheck: false, numHealthy, numUnhealthy: 0 }, transition, events };
}

function onFailure(flags: number, counts: VerdictCounts, type: FailureType, thresholds: Thresholds): Verdict {
  const events: HealthEvent[] = [];
  let numUnhealthy = counts.numUnhealthy;
  let transition: HealthTransition = 'Unchanged';
  if ((flags & HealthFlag.FAILED_ACTIVE_HC) === 0) {
    if (type !== 'NETWORK' || ++numUnhealthy === thresholds.unhealthyThreshold) {
      flags |= HealthFlag.FAILED_ACTIVE_HC;
      transition = 'Changed';
      events.push({ kind: 'eject_unhealthy', failureType: type });
    } else {
      transition = 'ChangePending';
    }
  }
  ({ flags, transition } = clearPending(flags, transition));
  if (counts.firstCheck || thresholds.alwaysLogHealthCheckFailures) {
    events.push({ kind: 'health_check_failure', failureType: type, firstCheck: counts.firstCheck });
  }
  return { flags, counts: { firstCheck: false, numHealthy: 0, numUnhealthy }, transition, events };
}

/** The first verdict ends PENDING_ACTIVE_HC; the balancers must hear of it even when health did not change. */
function clearPending(flags: number, transition: HealthTransition): { flags: number; transition: HealthTransition } {
  if ((flags & HealthFlag.PENDING_ACTIVE_HC) === 0) return { flags, transition };
  return { flags: flags & ~HealthFlag.PENDING_ACTIVE_HC, transition: 'Changed' };
}
