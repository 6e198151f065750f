// A route's hash policies (Envoy 1.16's Http::HashPolicyImpl): the 64-bit key by which a
// hashing balancer (RING_HASH, MAGLEV) places a request. Each policy that finds its value
// hashes it with xxHash64 (seed 0); the results combine as rotl64(hash, 1) ^ next, so that
// two identical policies do not cancel out. A terminal policy that leaves a hash ends the walk.

import { xxHash64 } from '../../common/hash/xxhash64';
import type { HashPolicy } from '../../config/model';
import type { RequestHead } from '../../http/message';
import { headerValue } from './header_matcher';
import { queryParameter } from './query_string';

/** What the policies read of a request besides its head. */
export interface HashedRequest {
  readonly head: RequestHead;
  /** The downstream IP as Envoy's stream info has it (see downstreamRemoteIp). */
  readonly remoteIp: string;
  /** Makes the cookie a cookie policy with a ttl asks for when the request has none; returns its value. */
  addCookie(name: string, path: string, ttlSeconds: number): string;
}

const MASK_64 = (1n << 64n) - 1n;

/** The request's hash; null when no policy found its value. */
export function computeHashKey(policies: readonly HashPolicy[], request: HashedRequest): bigint | null {
  let hash: bigint | null = null;
  for (const policy of policies) {
    const next = evaluate(policy, request);
    if (next !== null) hash = hash === null ? next : (((hash << 1n) | (hash >> 63n)) & MASK_64) ^ next;
    if (policy.terminal && hash !== null) break;
  }
  return hash;
}

function evaluate(policy: HashPolicy, request: HashedRequest): bigint | null {
  switch (policy.kind) {
    case 'header': {
      const value = headerValue(request.head, policy.name);
      return value === undefined ? null : hashText(value);
    }
    case 'cookie': {
      const value = cookieValue(request.head, policy.name);
      if (value !== '') return hashText(value);
      // An empty cookie counts as absent, as in Envoy.
      return policy.ttlSeconds === null ? null : hashText(request.addCookie(policy.name, policy.path, policy.ttlSeconds));
    }
    case 'source_ip':
      return request.remoteIp === '' ? null : hashText(request.remoteIp);
    case 'query_parameter': {
      const value = queryParameter(request.head.path, policy.name);
      return value === null ? null : hashText(value);
    }
    case 'filter_state':
      // No filter of this build leaves a hashable object in the filter state, and without one
      // Envoy's policy yields no hash either.
      return null;
  }
}

/** The codec reads the head as latin1, one char a byte: hashing those bytes is hashing what Envoy hashes. */
function hashText(text: string): bigint {
  return xxHash64(Buffer.from(text, 'latin1'));
}

/**
 * Envoy's Utility::parseCookieValue: the first `name=value` among the Cookie headers' `;`-separated
 * cookies (leading spaces skipped), its value unquoted; '' when there is none.
 */
export function cookieValue(head: RequestHead, name: string): string {
  const headers = head.headers;
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i] !== 'cookie') continue;
    for (const cookie of headers[i + 1].split(';')) {
      const equals = cookie.indexOf('=');
      if (equals < 0) continue;
      let start = 0;
      while (start < equals && cookie.charCodeAt(start) === 0x20) start++;
      if (cookie.slice(start, equals) !== name) continue;
      const value = cookie.slice(equals + 1);
      return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
    }
  }
  return '';
}

/** The value of a cookie the router makes (Envoy's addDownstreamSetCookie): the connection's addresses, hashed, in 16 hex digits. */
export function generatedCookieValue(remoteAddress: string, localAddress: string): string {
  return hashText(remoteAddress + localAddress).toString(16).padStart(16, '0');
}

/** Envoy's makeSetCookieValue with HttpOnly: a ttl of 0 leaves out Max-Age, a session cookie. */
export function setCookieValue(name: string, value: string, path: string, ttlSeconds: number): string {
  let text = `${name}="${value}"`;
  if (ttlSeconds !== 0) text += `; Max-Age=${ttlSeconds}`;
  if (path !== '') text += `; Path=${path}`;
  return `${text}; HttpOnly`;
}
