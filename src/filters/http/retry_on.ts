// The retry conditions of retry_policy.retry_on and x-proxy-retry-on (Envoy's RetryPolicy
// RETRY_ON_* flags), and which outcomes of an upstream try each makes retriable
// (Envoy's RetryStateImpl::wouldRetryFromHeaders / wouldRetryFromReset).

import type { StreamResetReason } from '../../http/codec';

/** Any 5xx response, or a reset or connect failure (Envoy counts those as 5xx). */
export const RETRY_ON_5XX = 1;
/** 502, 503 and 504, or a reset or connect failure. */
export const RETRY_ON_GATEWAY_ERROR = 2;
export const RETRY_ON_CONNECT_FAILURE = 4;
/** 409 only, as in Envoy. */
export const RETRY_ON_RETRIABLE_4XX = 8;
/** A reset, a connection failure or a timed out try, before the response started. */
export const RETRY_ON_RESET = 16;
/** The statuses of retriable_status_codes and x-proxy-retriable-status-codes. */
export const RETRY_ON_RETRIABLE_STATUS_CODES = 32;
/** An HTTP/2 upstream refused the stream (RST_STREAM REFUSED_STREAM): it never saw the request. */
export const RETRY_ON_REFUSED_STREAM = 64;

const CONDITIONS: ReadonlyMap<string, number> = new Map([
  ['5xx', RETRY_ON_5XX],
  ['gateway-error', RETRY_ON_GATEWAY_ERROR],
  ['connect-failure', RETRY_ON_CONNECT_FAILURE],
  ['retriable-4xx', RETRY_ON_RETRIABLE_4XX],
  ['reset', RETRY_ON_RESET],
  ['retriable-status-codes', RETRY_ON_RETRIABLE_STATUS_CODES],
  ['refused-stream', RETRY_ON_REFUSED_STREAM],
]);

/** Envoy 1.16's other conditions: they need gRPC or header matching, which this build lacks. */
export const UNSUPPORTED_RETRY_CONDITIONS: ReadonlySet<string> = new Set([
  'retriable-headers',
  'cancelled',
  'deadline-exceeded',
  'internal',
  'resource-exhausted',
  'unavailable',
]);

export interface ParsedRetryOn {
  readonly flags: number;
  /** The names that are no condition of this build, in order. */
  readonly unknown: readonly string[];
}

/** A comma-separated list of conditions (spaces around names allowed, empty names skipped). */
export function parseRetryOn(value: string): ParsedRetryOn {
  let flags = 0;
  const unknown: string[] = [];
  for (const part of value.split(',')) {
    const name = part.trim();
    if (name === '') continue;
    const flag = CONDITIONS.get(name);
    if (flag === undefined) unknown.push(name);
    else flags |= flag;
  }
  return { flags, unknown };
}

/** A comma-separated list of status codes; what is no integer is skipped, as Envoy skips it. */
export function parseStatusCodes(value: string): number[] {
  const codes: number[] = [];
  for (const part of value.split(',')) {
    const text = part.trim();
    if (/^\d+$/.test(text)) codes.push(Number(text));
  }
  return codes;
}

/**
 * Whether a response head with `status` is retriable under `retryOn`. A response that says the
 * request was rate limited (x-proxy-ratelimited) never is.
 */
export function wouldRetryFromStatus(retryOn: number, retriableStatusCodes: readonly number[], status: number, rateLimited: boolean): boolean {
  if (rateLimited) return false;
  if ((retryOn & RETRY_ON_5XX) !== 0 && status >= 500 && status < 600) return true;
  if ((retryOn & RETRY_ON_GATEWAY_ERROR) !== 0 && status >= 502 && status <= 504) return true;
  if ((retryOn & RETRY_ON_RETRIABLE_4XX) !== 0 && status === 409) return true;
  if ((retryOn & RETRY_ON_RETRIABLE_STATUS_CODES) !== 0 && retriableStatusCodes.includes(status)) return true;
  return false;
}

/**
 * Whether a try that ended without a response is retriable: reset, failed to connect, or timed
 * out (a per-try timeout is a local reset). A circuit breaker's overflow never is.
 */
export function wouldRetryFromReset(retryOn: number, reason: StreamResetReason): boolean {
  if (reason === 'overflow') return false;
  if ((retryOn & (RETRY_ON_RESET | RETRY_ON_5XX | RETRY_ON_GATEWAY_ERROR)) !== 0) return true;
  if ((retryOn & RETRY_ON_REFUSED_STREAM) !== 0 && reason === 'remote refused stream reset') return true;
  return (retryOn & RETRY_ON_CONNECT_FAILURE) !== 0 && reason === 'connection failure';
}
