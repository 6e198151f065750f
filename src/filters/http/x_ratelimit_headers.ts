// The x-ratelimit-* response headers of the rate limit filter's enable_x_ratelimit_headers
// (DRAFT_VERSION_03 of draft-polli-ratelimit-headers), written as Envoy 1.16's
// XRateLimitHeaderUtils writes them from the service's descriptor statuses. Pure.

import type { DescriptorStatus } from './rate_limit_messages';

/** Seconds in each RateLimitResponse.RateLimit.Unit the draft's window can name; others have no window. */
const UNIT_SECONDS: Readonly<Record<string, number>> = { SECOND: 1, MINUTE: 60, HOUR: 3600, DAY: 86400 };

/**
 * The headers, [name, value, ...], for the statuses that carry a current limit: the one with the
 * fewest requests remaining (the first of equals) gives x-ratelimit-limit's leading number,
 * x-ratelimit-remaining and x-ratelimit-reset; each with a known unit adds its quota policy
 * (`, <limit>;w=<window>` and `;name="<name>"` when named). None when no status has a limit.
 */
export function xRateLimitHeaders(statuses: readonly DescriptorStatus[]): string[] {
  let least: DescriptorStatus | null = null;
  let quotaPolicy = '';
  for (const status of statuses) {
    const limit = status.currentLimit;
    if (limit === null) continue;
    if (least === null || status.limitRemaining < least.limitRemaining) least = status;
    const window = UNIT_SECONDS[limit.unit];
    if (window === undefined) continue;
    quotaPolicy += `, ${limit.requestsPerUnit};w=${window}`;
    if (limit.name !== '') quotaPolicy += `;name="${limit.name}"`;
  }
  if (least === null) return [];
  return [
    'x-ratelimit-limit',
    `${least.currentLimit!.requestsPerUnit}${quotaPolicy}`,
    'x-ratelimit-remaining',
    String(least.limitRemaining),
    'x-ratelimit-reset',
    String(least.resetSeconds),
  ];
}
