// Which headers ext_authz's HTTP service passes on, by name (Envoy 1.16's ClientConfig matchers):
// to the authorization server, the request's :authority, :method, :path and authorization always
// and allowed_headers besides; to the upstream, the server's headers allowed; to the client of a
// denied request, every header but :authority (Envoy's Host) when allowed_client_headers is
// empty, else those it allows plus :status, content-length, www-authenticate and location.
// Patterns match as configured (Envoy 1.16 runs its case-sensitive matching by default). Pure.

import { stringMatcher } from '../../common/string_matcher';
import type { StringMatch } from '../../config/model';

/** Whether a header, by its lower-case name, passes. */
export type HeaderNameMatcher = (name: string) => boolean;

const REQUEST_ALWAYS: readonly string[] = ['authorization', ':method', ':path', ':authority'];
const CLIENT_ALWAYS: readonly string[] = [':status', 'content-length', 'www-authenticate', 'location'];

function anyOf(patterns: readonly StringMatch[], always: readonly string[]): HeaderNameMatcher {
  const matchers = patterns.map(stringMatcher);
  const names = new Set(always);
  return (name) => names.has(name) || matchers.some((matches) => matches(name));
}

/** authorization_request.allowed_headers, with the headers Envoy always sends. */
export function requestHeaderMatcher(allowed: readonly StringMatch[]): HeaderNameMatcher {
  return anyOf(allowed, REQUEST_ALWAYS);
}

/** authorization_response.allowed_client_headers. */
export function clientHeaderMatcher(allowed: readonly StringMatch[]): HeaderNameMatcher {
  if (allowed.length === 0) return (name) => name !== ':authority';
  return anyOf(allowed, CLIENT_ALWAYS);
}

/** authorization_response.allowed_upstream_headers (or _to_append): none when empty. */
export function upstreamHeaderMatcher(allowed: readonly StringMatch[]): HeaderNameMatcher {
  return anyOf(allowed, []);
}
