// Cross-site request forgery and DNS rebinding checks for the admin listener. Browsers mark
// their requests (Sec-Fetch-Site, Origin); curl and scripts send neither and are never refused.
// A page on another site must not mutate anything, and a page whose host name an attacker made
// resolve to the admin's address (DNS rebinding: same-origin to the browser) must not even read,
// so a browser's request must name the admin by an IP literal it listens on or a loopback name.
// Pure: the caller supplies the addresses.

import * as net from 'node:net';

export interface AdminIdentity {
  readonly port: number;
  /** IP literals (no brackets) the admin can be reached at: its bound address or, bound to a wildcard, every local one. */
  readonly addresses: ReadonlySet<string>;
}

export interface BrowserHeaders {
  readonly host?: string;
  readonly origin?: string;
  readonly secFetchSite?: string;
}

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.']);

function isLoopback(host: string): boolean {
  if (LOOPBACK_NAMES.has(host)) return true;
  if (net.isIPv4(host)) return host.startsWith('127.');
  return host === '::1';
}

/** `host[:port]` or `[v6][:port]` into its parts; null when malformed. */
export function parseAuthority(authority: string, defaultPort: number): { host: string; port: number } | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(authority);
  if (!m) return null;
  const host = (m[1] ?? m[2]!).toLowerCase();
  const port = m[3] === undefined ? defaultPort : Number(m[3]);
  return port > 65535 ? null : { host, port };
}

/** Whether `authority` (a Host header, or an origin's host part) names this admin. */
export function namesAdmin(authority: string, defaultPort: number, admin: AdminIdentity): boolean {
  const parsed = parseAuthority(authority, defaultPort);
  if (parsed === null || parsed.port !== admin.port) return false;
  return isLoopback(parsed.host) || admin.addresses.has(parsed.host);
}

/** Whether an Origin header value is the admin's own origin. */
export function isAdminOrigin(origin: string, admin: AdminIdentity): boolean {
  const m = /^(https?):\/\/([^/]+)$/i.exec(origin);
  if (!m) return false; // `null` (a sandboxed or privacy-sensitive context) and anything malformed
  return namesAdmin(m[2]!, m[1]!.toLowerCase() === 'https' ? 443 : 80, admin);
}

/**
 * Why a request is refused (403), or null to serve it. Only requests a browser marked are
 * judged: their Host must name the admin; a mutation must also come from the admin's own
 * pages (Sec-Fetch-Site same-origin, or none for one the user typed) and origin.
 */
export function browserRefusal(h: BrowserHeaders, mutates: boolean, admin: AdminIdentity): string | null {
  const fromBrowser = h.secFetchSite !== undefined || h.origin !== undefined;
  if (!fromBrowser) return null;
  if (h.host === undefined || !namesAdmin(h.host, 80, admin)) {
    return `host '${h.host ?? ''}' does not name this admin listener: browse it by its IP address or localhost`;
  }
  if (!mutates) return null;
  if (h.secFetchSite === 'cross-site' || h.secFetchSite === 'same-site') {
    return `a ${h.secFetchSite} request may not change the server`;
  }
  if (h.origin !== undefined && !isAdminOrigin(h.origin, admin)) {
    return `origin '${h.origin}' may not change the server`;
  }
  return null;
}
