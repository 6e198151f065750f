// How long until a name is resolved again. After a success: the refresh rate, or with
// respect_dns_ttl the answer's TTL when it is not 0. After a failure: Envoy's
// FixedBackOffStrategy (the refresh rate) without dns_failure_refresh_rate, its
// JitteredExponentialBackOffStrategy with it; both restart from the beginning after a success.

import type { DnsClusterSettings } from './dns_cluster_settings';

export interface BackOffStrategy {
  nextBackOffMs(): number;
  reset(): void;
}

export class FixedBackOff implements BackOffStrategy {
  constructor(private readonly intervalMs: number) {}

  nextBackOffMs(): number {
    return this.intervalMs;
  }

  reset(): void {}
}

/**
 * Full jitter: each delay is uniform in [0, interval), the interval starting at base and
 * doubling per failure until it would pass max, where it stays.
 */
export class JitteredExponentialBackOff implements BackOffStrategy {
  private intervalMs: number;

  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
    private readonly random: () => number,
  ) {
    this.intervalMs = baseMs;
  }

  nextBackOffMs(): number {
    const current = this.intervalMs;
    this.intervalMs = current * 2 <= this.maxMs ? current * 2 : this.maxMs;
    return this.random() % current;
  }

  reset(): void {
    this.intervalMs = this.baseMs;
  }
}

export function failureBackOff(settings: DnsClusterSettings, random: () => number): BackOffStrategy {
  const rate = settings.dnsFailureRefreshRate;
  return rate === null ? new FixedBackOff(settings.dnsRefreshRateMs) : new JitteredExponentialBackOff(rate.baseMs, rate.maxMs, random);
}

/** `ttlSeconds` is the TTL that governs the answer, null when the answer was empty. */
export function successRefreshMs(settings: DnsClusterSettings, ttlSeconds: number | null): number {
  return settings.respectDnsTtl && ttlSeconds !== null && ttlSeconds > 0 ? ttlSeconds * 1000 : settings.dnsRefreshRateMs;
}
