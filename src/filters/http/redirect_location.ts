// The Location of a route's redirect, and of a direct response whose status is 201 or 3xx:
// Envoy 1.16's RouteEntryImplBase::newPath. Each part the route leaves unset is the request's
// own; the request's port goes when the redirect names a port of its own, or when it changes
// the scheme away from that scheme's default port. Pure.

import type { RedirectAction } from '../../config/model';

const NO_REWRITE: Omit<RedirectAction, 'kind' | 'status'> = { scheme: null, host: null, port: null, path: null, prefixRewrite: null, stripQuery: false };

export interface RedirectedRequest {
  /** The request's scheme as x-forwarded-proto says it. */
  readonly scheme: string;
  /** Host[:port], as received. */
  readonly authority: string;
  /** Origin form, with its query. */
  readonly path: string;
  /** How much of the path the route's match covered (what prefix_rewrite replaces). */
  readonly matchedLength: number;
}

/** @param redirect null for a direct response: the request's own URL */
export function redirectLocation(redirect: RedirectAction | null, request: RedirectedRequest): string {
  const rule = redirect ?? NO_REWRITE;
  const scheme = rule.scheme ?? request.scheme;
  const port = rule.port === null ? '' : `:${rule.port}`;
  const host = rule.host ?? requestHost(request, scheme, port);
  let path = request.path;
  let pathHasOwnQuery = false;
  if (rule.path !== null) {
    // A path_redirect with a query of its own replaces the request's, strip_query or not.
    pathHasOwnQuery = rule.path.includes('?');
    const query = path.indexOf('?');
    path = pathHasOwnQuery || query < 0 ? rule.path : rule.path + path.slice(query);
  } else if (rule.prefixRewrite !== null) {
    path = rule.prefixRewrite + path.slice(request.matchedLength);
  }
  if (rule.stripQuery && !pathHasOwnQuery) {
    const query = path.indexOf('?');
    if (query >= 0) path = path.slice(0, query);
  }
  return `${scheme}://${host}${port}${path}`;
}

/** The request's host, without its port when the redirect sets one or leaves that scheme's default. */
function requestHost(request: RedirectedRequest, scheme: string, port: string): string {
  const authority = request.authority;
  if (authority === '') return authority;
  const colon = authority.startsWith('[') ? bracketedPortColon(authority) : authority.lastIndexOf(':');
  if (colon < 0) return authority;
  const requestPort = authority.slice(colon);
  let removePort = port !== '';
  if (scheme !== request.scheme) {
    removePort ||= request.scheme === 'https' && requestPort === ':443';
    removePort ||= request.scheme === 'http' && requestPort === ':80';
  }
  return removePort ? authority.slice(0, colon) : authority;
}

/** `[v6]:port` -> the index of its port's colon; -1 without a port. */
function bracketedPortColon(authority: string): number {
  const end = authority.lastIndexOf(']:');
  return end < 0 ? -1 : end + 1;
}
