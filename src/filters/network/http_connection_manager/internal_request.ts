// Whether a request comes from inside the trusted network (Envoy 1.16's internal request test in
// ConnectionManagerUtility::mutateRequestHeaders). Only such a request may steer the router with
// x-proxy-retry-on, x-proxy-max-retries and the timeout headers; from any other they are dropped.

import { isIP } from 'node:net';
import type { RequestHead } from '../../../http/message';

/**
 * RFC 1918 IPv4, 127.0.0.1, IPv6 unique local (fd00::/8) and ::1, as Envoy's
 * Network::Utility::isInternalAddress. An IPv4-mapped IPv6 address counts as its IPv4 address.
 */
export function isInternalAddress(ip: string): boolean {
  const v4 = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  const family = isIP(v4);
  if (family === 4) {
    const [a, b] = v4.split('.').map(Number);
    return a === 10 || (a === 192 && b === 168) || (a === 172 && b >= 16 && b <= 31) || v4 === '127.0.0.1';
  }
  if (family === 6) return v4 === '::1' || /^fd[0-9a-f]{2}:/i.test(v4);
  return false;
}

/**
 * The address x-forwarded-for names after skipping its last `skip` entries, and whether it holds
 * one address only (Envoy's getLastAddressFromXFF). null when there is no such valid IP.
 */
export function forwardedForAddress(forwardedFor: string, skip: number): { address: string | null; single: boolean } {
  let rest = forwardedFor;
  for (let i = 0; i < skip; i++) {
    const comma = rest.lastIndexOf(',');
    if (comma < 0) return { address: null, single: false };
    rest = rest.slice(0, comma);
  }
  const comma = rest.lastIndexOf(',');
  const last = (comma >= 0 && comma + 1 < rest.length ? rest.slice(comma + 1) : rest).trim();
  if (isIP(last) === 0) return { address: null, single: false };
  return { address: last, single: comma < 0 && skip === 0 };
}

/**
 * @param forwardedFor the request's x-forwarded-for as received (repeats joined), null when absent
 * @param peer the downstream connection's remote IP
 */
export function isInternalRequest(useRemoteAddress: boolean, xffNumTrustedHops: number, peer: string, forwardedFor: string | null): boolean {
  if (useRemoteAddress) {
    // Our own append makes the header's single address the peer's: only a request that came without one qualifies.
    if (forwardedFor !== null) return false;
    return isInternalAddress(peer);
  }
  // Without use_remote_address the trusted hop's x-forwarded-for decides; none means external.
  if (forwardedFor === null) return false;
  const { address, single } = forwardedForAddress(forwardedFor, xffNumTrustedHops);
  return single && address !== null && isInternalAddress(address);
}

/** The request's x-forwarded-for, repeated headers joined as one list; null without one. */
export function forwardedForOf(head: RequestHead): string | null {
  let forwardedFor: string | null = null;
  const headers = head.headers;
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i] === 'x-forwarded-for') forwardedFor = forwardedFor === null ? headers[i + 1] : `${forwardedFor}, ${headers[i + 1]}`;
  }
  return forwardedFor;
}
