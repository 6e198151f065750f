// What a fault setting comes to for one request (Envoy's Filters::Common::Fault providers): a
// fixed setting is the configuration's; a header-controlled one is the request's x-proxy-fault-*
// header, and a header percentage is capped by the configured one. Pure.

import type { FaultAbort, FaultDelay, FaultRateLimit, FractionalPercent } from '../../config/model';
import { firstHeaderValue } from '../../http/message';

export const FAULT_HEADERS = {
  delay: 'x-proxy-fault-delay-request',
  delayPercentage: 'x-proxy-fault-delay-request-percentage',
  abort: 'x-proxy-fault-abort-request',
  abortGrpc: 'x-proxy-fault-abort-grpc-request',
  abortPercentage: 'x-proxy-fault-abort-request-percentage',
  throughput: 'x-proxy-fault-throughput-response',
  throughputPercentage: 'x-proxy-fault-throughput-response-percentage',
} as const;

const MAX_UINT32 = 0xffff_ffff;

/** An unsigned decimal header value, as absl::SimpleAtoi reads one; null when absent or not one. */
function unsigned(headers: readonly string[], name: string, max: number): number | null {
  const value = firstHeaderValue(headers, name)?.trim();
  if (value === undefined || !/^\+?\d+$/.test(value)) return null;
  const n = Number(value);
  return n <= max ? n : null;
}

/** The configured percentage, or the request's header numerator capped by it (over its denominator). */
function percentage(configured: FractionalPercent, headerControlled: boolean, headers: readonly string[], header: string): FractionalPercent {
  if (!headerControlled) return configured;
  const numerator = unsigned(headers, header, MAX_UINT32);
  return numerator === null ? configured : { numerator: Math.min(numerator, configured.numerator), denominator: configured.denominator };
}

/** The delay asked for, in ms; null when there is none (a header delay without a valid header). */
export function delayMs(delay: FaultDelay, headers: readonly string[]): number | null {
  return delay.fixedMs ?? unsigned(headers, FAULT_HEADERS.delay, Number.MAX_SAFE_INTEGER);
}

export function delayPercentage(delay: FaultDelay, headers: readonly string[]): FractionalPercent {
  return percentage(delay.percentage, delay.fixedMs === null, headers, FAULT_HEADERS.delayPercentage);
}

/** The HTTP status to abort with; null when the abort is not by HTTP status (or its header is missing or out of [200, 600)). */
export function abortHttpStatus(abort: FaultAbort, headers: readonly string[]): number | null {
  if (abort.kind !== 'header') return abort.kind === 'http' ? abort.status : null;
  const status = unsigned(headers, FAULT_HEADERS.abort, MAX_UINT32);
  return status !== null && status >= 200 && status < 600 ? status : null;
}

/** The gRPC status to abort with; null when the abort is not by gRPC status. */
export function abortGrpcStatus(abort: FaultAbort, headers: readonly string[]): number | null {
  if (abort.kind !== 'header') return abort.kind === 'grpc' ? abort.status : null;
  return unsigned(headers, FAULT_HEADERS.abortGrpc, MAX_UINT32);
}

export function abortPercentage(abort: FaultAbort, headers: readonly string[]): FractionalPercent {
  return percentage(abort.percentage, abort.kind === 'header', headers, FAULT_HEADERS.abortPercentage);
}

/** The response's rate in KiB/s; null when there is none (a header limit without a valid, non-zero header). */
export function rateKbps(limit: FaultRateLimit, headers: readonly string[]): number | null {
  if (limit.fixedKbps !== null) return limit.fixedKbps;
  const kbps = unsigned(headers, FAULT_HEADERS.throughput, Number.MAX_SAFE_INTEGER);
  return kbps === null || kbps === 0 ? null : kbps;
}

export function rateLimitPercentage(limit: FaultRateLimit, headers: readonly string[]): FractionalPercent {
  return percentage(limit.percentage, limit.fixedKbps === null, headers, FAULT_HEADERS.throughputPercentage);
}
