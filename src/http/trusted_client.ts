// Who sent a request, as far as the proxy can trust it, and whether it comes from inside the
// trusted network: Envoy 1.16's final remote address and internal request test in
// ConnectionManagerUtility::mutateRequestHeaders. The address is what access logs, hash policies
// and header values print; only an internal request may steer the router with x-proxy-retry-on,
// x-proxy-max-retries and the timeout headers. Pure.

import { isIP } from 'node:net';
import { firstHeaderValue, type RequestHead } from './message';

/** A request's trusted client. */
export interface TrustedClient {
  /** The client's IP: the connection's peer, or an address x-forwarded-for names. */
  readonly ip: string;
  /** The peer's port; 0 for an address from x-forwarded-for, as Envoy prints it. */
  readonly port: number;
  /** Envoy's internal request: x-proxy-internal is set, steering headers are honoured. */
  readonly internal: boolean;
  /** Envoy's edge request (use_remote_address, not internal): x-proxy-external-address is set. */
  readonly edge: boolean;
}

/** How a connection manager decides a request's trusted client. */
export interface ClientTrust {
  readonly useRemoteAddress: boolean;
  readonly xffNumTrustedHops: number;
}

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
 * @param peerIp the downstream connection's remote IP, `peerPort` its port
 * @param forwardedFor the request's x-forwarded-for as received (repeats joined), null when absent
 */
export function trustedClient(trust: ClientTrust, peerIp: string, peerPort: number, forwardedFor: string | null): TrustedClient {
  const hops = trust.xffNumTrustedHops;
  let address: string | null = null;
  let single: boolean;
  if (trust.useRemoteAddress) {
    // Our own append makes the header's single address the peer's: only a request that came without one qualifies.
    single = forwardedFor === null;
    // Trusted proxies in front name the client hops back; failing that, the peer is the client.
    if (hops > 0 && forwardedFor !== null) address = forwardedForAddress(forwardedFor, hops - 1).address;
  } else if (forwardedFor !== null) {
    ({ address, single } = forwardedForAddress(forwardedFor, hops));
  } else {
    // Without use_remote_address and without x-forwarded-for, a request is external.
    single = false;
  }
  const internal = single && isInternalAddress(address ?? peerIp);
  return address === null
    ? { ip: peerIp, port: peerPort, internal, edge: trust.useRemoteAddress && !internal }
    : { ip: address, port: 0, internal, edge: trust.useRemoteAddress && !internal };
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

/** The headers in which one proxy tells the next about a request, dropped from an edge request as Envoy does. */
export function isEdgeDroppedHeader(name: string): boolean {
  return name === 'x-proxy-downstream-service-cluster' || name === 'x-proxy-downstream-service-node' || name === 'x-proxy-decorator-operation';
}

/**
 * The request's scheme as x-forwarded-proto tells it (Envoy sets the header before routing): the
 * connection's under use_remote_address, else the header's when the request brought one.
 */
export function forwardedProtoOf(head: RequestHead, useRemoteAddress: boolean): string {
  return useRemoteAddress ? head.scheme : (firstHeaderValue(head.headers, 'x-forwarded-proto') ?? head.scheme);
}
