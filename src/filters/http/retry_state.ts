// One request's retries (Envoy's RetryStateImpl): the conditions and the number of retries
// from the route's retry_policy and the trusted request headers, the back-off between tries,
// the cluster's retry circuit breaker and the retry counters.

import type { RetryPolicy } from '../../config/model';
import { JitteredBackOff } from '../../common/jittered_backoff';
import type { Counter } from '../../stats/stats';
import type { Resource } from '../../upstream/shared/resource_manager';
import { parseRetryOn, parseStatusCodes } from './retry_on';
import type { RandomSource } from '../../common/random';

export const enum RetryStatus {
  /** Not retriable: the outcome goes downstream. */
  No,
  /** Retry after `delayMs`; one of the cluster's retries is held until the next decision or release(). */
  Yes,
  /** Retriable, but the request has used its retries. */
  LimitExceeded,
  /** Retriable, but the cluster's retry circuit breaker is full. */
  Overflow,
}

export interface RetryCounters {
  readonly upstream_rq_retry: Counter;
  readonly upstream_rq_retry_success: Counter;
  readonly upstream_rq_retry_overflow: Counter;
  readonly upstream_rq_retry_limit_exceeded: Counter;
}

/** The trusted request's retry headers, raw; null for those it did not send. */
export interface RetryHeaders {
  readonly retryOn: string | null;
  readonly maxRetries: string | null;
  readonly retriableStatusCodes: string | null;
}

export class RetryState {
  readonly retryOn: number;
  readonly retriableStatusCodes: readonly number[];
  /** The back-off before the retry the last Yes scheduled. */
  delayMs = 0;
  private remaining: number;
  /** A retry was scheduled and holds one of the cluster's retries. */
  private holding = false;
  private readonly backOff: JitteredBackOff;

  /**
   * A request's retry state, or null when nothing can make it retry (Envoy allocates none then).
   * @param policy the route's; without one, Envoy's defaults (one retry, 25 ms back-off)
   * @param counters the cluster's
   * @param vcluster the request's virtual cluster's, counted alongside; null when it has none
   */
  static create(
    policy: RetryPolicy | undefined,
    headers: RetryHeaders,
    counters: RetryCounters,
    vcluster: RetryCounters | null,
    retries: Resource,
    random: RandomSource,
  ): RetryState | null {
    let retryOn = policy?.retryOn ?? 0;
    if (headers.retryOn !== null) retryOn |= parseRetryOn(headers.retryOn).flags;
    if (retryOn === 0) return null;
    let numRetries = policy?.numRetries ?? 1;
    if (headers.maxRetries !== null && /^\d+$/.test(headers.maxRetries.trim())) numRetries = Number(headers.maxRetries.trim());
    let codes = policy?.retriableStatusCodes ?? [];
    if (headers.retriableStatusCodes !== null) codes = [...codes, ...parseStatusCodes(headers.retriableStatusCodes)];
    const base = policy?.baseIntervalMs ?? 25;
    return new RetryState(retryOn, codes, numRetries, new JitteredBackOff(base, policy?.maxIntervalMs ?? 10 * base, random), counters, vcluster, retries);
  }

  constructor(
    retryOn: number,
    retriableStatusCodes: readonly number[],
    numRetries: number,
    backOff: JitteredBackOff,
    private readonly counters: RetryCounters,
    private readonly vcluster: RetryCounters | null,
    private readonly retries: Resource,
  ) {
    this.retryOn = retryOn;
    this.retriableStatusCodes = retriableStatusCodes;
    this.remaining = numRetries;
    this.backOff = backOff;
  }

  /**
   * Decides on a try's outcome. A try that ends well after a retry counts upstream_rq_retry_success;
   * each decision releases the retry the previous one held.
   */
  shouldRetry(wouldRetry: boolean): RetryStatus {
    if (this.holding && !wouldRetry) this.count('upstream_rq_retry_success');
    this.release();
    if (!wouldRetry) return RetryStatus.No;
    if (this.remaining === 0) {
      this.count('upstream_rq_retry_limit_exceeded');
      return RetryStatus.LimitExceeded;
    }
    this.remaining--;
    if (!this.retries.tryAcquire()) {
      this.count('upstream_rq_retry_overflow');
      return RetryStatus.Overflow;
    }
    this.holding = true;
    this.count('upstream_rq_retry');
    this.delayMs = this.backOff.nextMs();
    return RetryStatus.Yes;
  }

  /** The cluster's counter, and the virtual cluster's as Envoy's RetryStateImpl counts both. */
  private count(name: keyof RetryCounters): void {
    this.counters[name].inc();
    this.vcluster?.[name].inc();
  }

  /** Gives back the retry a Yes took (the request ended, or its next try was decided on). */
  release(): void {
    if (!this.holding) return;
    this.holding = false;
    this.retries.release();
  }
}
