// One route's match as Envoy 1.16's RouteEntryImplBase has it, compiled once: a path specifier
// (prefix, path, safe_regex, or connect_matcher for CONNECT requests), then every header
// matcher, every query parameter, the gRPC content type and the downstream's client
// certificate. The runtime fraction, which draws a random number, is the route table's.

import { asciiLowerCase } from '../../common/ascii_case';
import { utf8Text } from '../../common/byte_string';
import { byteStringMatcher } from '../../common/string_matcher';
import type { QueryParameterMatch, RouteMatch, TlsContextMatch } from '../../config/model';
import type { RequestHead } from '../../http/message';
import { isGrpc } from '../../http/grpc';
import { SafeRegex } from '../../regex/safe_regex';
import type { SslConnectionInfo } from '../../stream_info/stream_info';
import { HeaderMatcher, matchAll } from './header_matcher';
import { queryParameter } from './query_string';

type PathTest = (path: string) => boolean;

interface QueryParameterTest {
  readonly name: string;
  /** Null: presence is enough. */
  readonly test: ((value: string) => boolean) | null;
}

/** What a tls_context match asks of the downstream's TLS session. */
export type PeerCertificateFacts = Pick<SslConnectionInfo, 'peerCertificatePresented' | 'peerCertificateValidated'>;

export class RouteMatcher {
  private readonly pathTest: PathTest;
  private readonly headers: readonly HeaderMatcher[];
  private readonly queryParameters: readonly QueryParameterTest[];

  constructor(private readonly match: RouteMatch) {
    this.pathTest = pathTest(match);
    this.headers = match.headers.map((header) => new HeaderMatcher(header));
    this.queryParameters = match.queryParameters.map(queryParameterTest);
  }

  /** @param tls the downstream's TLS session, asked only by a tls_context match */
  matches(head: RequestHead, tls: () => PeerCertificateFacts | null): boolean {
    if (this.match.connect === true && head.method !== 'CONNECT') return false;
    if (!this.pathTest(head.path)) return false;
    if (this.headers.length > 0 && !matchAll(this.headers, head)) return false;
    if (this.queryParameters.length > 0 && !queryMatches(this.queryParameters, head.path)) return false;
    if (this.match.grpc && !isGrpc(head)) return false;
    return this.match.tlsContext === undefined || tlsContextMatches(this.match.tlsContext, tls());
  }
}

/** Each fact the match sets must be the connection's; plaintext has neither. */
function tlsContextMatches(match: TlsContextMatch, tls: PeerCertificateFacts | null): boolean {
  if (match.presented !== undefined && match.presented !== (tls?.peerCertificatePresented ?? false)) return false;
  return match.validated === undefined || match.validated === (tls?.peerCertificateValidated ?? false);
}

/** How much of a `path` that `match` accepted it covers: what prefix_rewrite replaces. */
export function matchedLength(match: RouteMatch, path: string): number {
  if (match.prefix !== undefined) return match.prefix.length;
  if (match.path !== undefined) return match.path.length;
  return pathEnd(path, true);
}

function pathTest(match: RouteMatch): PathTest {
  const { prefix, path, safeRegex, caseSensitive } = match;
  // connect_matcher asks for the method alone (matches() checks it).
  if (match.connect === true) return () => true;
  if (safeRegex !== undefined) {
    // Validated when the configuration was loaded (program size included). RE2 reads the path's bytes as UTF-8.
    const regex = SafeRegex.compile(safeRegex);
    return (candidate) => regex.fullMatch(utf8Text(candidate.slice(0, pathEnd(candidate, true))));
  }
  // The model holds prefix and path as UTF-8 bytes, as the path is read.
  if (prefix !== undefined) {
    if (caseSensitive) return (candidate) => candidate.startsWith(prefix);
    const lower = asciiLowerCase(prefix);
    return (candidate) => candidate.length >= lower.length && asciiLowerCase(candidate.slice(0, lower.length)) === lower;
  }
  // A path match compares everything before the query string.
  const exact = caseSensitive ? (path ?? '') : asciiLowerCase(path ?? '');
  return (candidate) => {
    const end = pathEnd(candidate, false);
    if (end !== exact.length) return false;
    const before = end === candidate.length ? candidate : candidate.slice(0, end);
    return (caseSensitive ? before : asciiLowerCase(before)) === exact;
  };
}

/** Where the path proper ends: at the query (and, for a regex, at a fragment too, as in Envoy). */
export function pathEnd(path: string, fragmentToo: boolean): number {
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === 0x3f /* ? */ || (fragmentToo && c === 0x23) /* # */) return i;
  }
  return path.length;
}

function queryParameterTest(config: QueryParameterMatch): QueryParameterTest {
  return { name: config.name, test: config.value === null ? null : byteStringMatcher(config.value) };
}

function queryMatches(tests: readonly QueryParameterTest[], path: string): boolean {
  for (const { name, test } of tests) {
    const value = queryParameter(path, name);
    if (value === null || (test !== null && !test(value))) return false;
  }
  return true;
}
