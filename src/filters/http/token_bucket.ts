// Envoy 1.16's LocalRateLimiterImpl: a bucket that starts full with max_tokens, gives one token
// per request while it has any, and gains tokens_per_fill (up to max_tokens) every fill_interval.
// Envoy adds them on a timer; here the fills due since the bucket was made are counted on the
// injected clock when a request asks, which gives the same tokens and needs no timer (nor one to
// stop when the configuration goes).

import type { Clock } from '../../common/clock';
import type { TokenBucketConfig } from '../../config/model';

export class TokenBucket {
  private tokens: number;
  private readonly startMs: number;
  /** Fills added since startMs. */
  private fills = 0;

  constructor(
    private readonly config: TokenBucketConfig,
    private readonly clock: Clock,
  ) {
    this.tokens = config.maxTokens;
    this.startMs = clock.eventNow();
  }

  /** Takes a token; false when there is none. */
  take(): boolean {
    this.fill();
    if (this.tokens === 0) return false;
    this.tokens--;
    return true;
  }

  private fill(): void {
    const interval = this.config.fillIntervalMs;
    if (interval === 0) return;
    const due = Math.floor((this.clock.eventNow() - this.startMs) / interval);
    if (due === this.fills) return;
    // Each fill is capped at max_tokens, so those missed add up to the same as their sum capped.
    this.tokens = Math.min(this.config.maxTokens, this.tokens + (due - this.fills) * this.config.tokensPerFill);
    this.fills = due;
  }
}
