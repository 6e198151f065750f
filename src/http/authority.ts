// What a Host header, the authority of an absolute-form target, or a configured default host may
// be: uri-host [ ":" port ] (RFC 9112 section 3.2, RFC 3986 section 3.2.2), with no userinfo.

import { isIPv6 } from 'node:net';

/** reg-name (unreserved, pct-encoded, sub-delims) or IPv4address, then an optional port. */
const REG_NAME_AND_PORT = /^[A-Za-z0-9\-._~!$&'()*+,;=%]+(?::[0-9]*)?$/;
const BAD_PERCENT = /%(?![0-9A-Fa-f]{2})/;
const IP_LITERAL_AND_PORT = /^\[([^\]]*)\](?::[0-9]*)?$/;
const IP_FUTURE = /^v[0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+$/;

/** True for a non-empty uri-host with an optional port. */
export function isValidAuthority(value: string): boolean {
  // Checked on every request: the second pattern only runs when there is a '%'.
  if (REG_NAME_AND_PORT.test(value)) return !value.includes('%') || !BAD_PERCENT.test(value);
  const literal = IP_LITERAL_AND_PORT.exec(value);
  return literal !== null && (isIPv6(literal[1]) || IP_FUTURE.test(literal[1]));
}
