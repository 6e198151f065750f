// Between node:http2's header lists and the HTTP layer's header maps (RequestHead, ResponseHead).
// Pseudo-headers become fields, content-length becomes framing, and what HTTP/2 forbids on the
// wire (connection-specific headers, RFC 9113 section 8.2.2) never reaches nghttp2.

import type { OutgoingHttpHeaders } from 'node:http2';
import { BODY_CHUNKED, BODY_UNTIL_CLOSE, RequestHead, ResponseHead } from '../message';

/** Why a peer's header list cannot make a message: the stream is refused with PROTOCOL_ERROR. */
export class MalformedHeaders extends Error {}

const DIGITS = /^\d{1,15}$/;

/**
 * A request from a downstream HTTP/2 stream. `raw` is node's flat list with pseudo-headers;
 * `endStream`: the request has no body. Several cookie headers are joined with "; " (RFC 9113
 * section 8.2.3), so an HTTP/1 upstream sees one.
 * @throws MalformedHeaders when a pseudo-header is missing or content-length is not a length
 */
export function requestHeadOf(raw: readonly string[], endStream: boolean, scheme: string): RequestHead {
  let method = '';
  let path = '';
  let protocol = '';
  let authority = '';
  let host = '';
  let contentLength = -1;
  let cookie: string | null = null;
  const headers: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    const value = raw[i + 1];
    if (name.charCodeAt(0) === 0x3a /* ':' */) {
      if (name === ':method') method = value;
      else if (name === ':path') path = value;
      else if (name === ':authority') authority = value;
      else if (name === ':protocol') protocol = value;
      continue;
    }
    switch (name) {
      case 'content-length':
        if (!DIGITS.test(value) || (contentLength >= 0 && contentLength !== Number(value))) throw new MalformedHeaders('content-length');
        contentLength = Number(value);
        continue;
      case 'host':
        host = value;
        continue;
      case 'cookie':
        cookie = cookie === null ? value : `${cookie}; ${value}`;
        continue;
      default:
        headers.push(name, value);
    }
  }
  // An extended CONNECT (RFC 8441, :protocol) is an upgrade, which the HTTP/1 side of the proxy
  // knows as a GET with Upgrade (Envoy's transformUpgradeRequestFromH2toH1). A plain CONNECT has
  // neither :path nor :scheme (RFC 9113 section 8.5): its :authority is the tunnel's far end.
  const upgrade = method === 'CONNECT' && protocol !== '';
  if (method === '' || (path === '') !== (method === 'CONNECT' && !upgrade)) throw new MalformedHeaders('pseudo-headers');
  const head = new RequestHead(upgrade ? 'GET' : method, path, false);
  if (upgrade) head.upgrade = protocol;
  head.authority = authority === '' ? host : authority;
  head.scheme = scheme;
  if (cookie !== null) headers.push('cookie', cookie);
  for (let i = 0; i < headers.length; i++) head.headers.push(headers[i]);
  head.contentLength = contentLength;
  // After an upgrade's head the stream carries the new protocol's bytes, unframed, to its end.
  head.bodyLength = endStream ? 0 : upgrade ? BODY_UNTIL_CLOSE : contentLength >= 0 ? contentLength : BODY_CHUNKED;
  return head;
}

/**
 * A response from an upstream HTTP/2 stream (1xx excluded by the caller).
 * @throws MalformedHeaders when :status or content-length is not a number
 */
export function responseHeadOf(raw: readonly string[], endStream: boolean): ResponseHead {
  let status = -1;
  let contentLength = -1;
  const headers: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    const value = raw[i + 1];
    if (name === ':status') {
      status = /^\d{3}$/.test(value) ? Number(value) : -1;
    } else if (name === 'content-length') {
      if (!DIGITS.test(value)) throw new MalformedHeaders('content-length');
      contentLength = Number(value);
    } else if (name.charCodeAt(0) !== 0x3a) {
      headers.push(name, value);
    }
  }
  if (status < 100) throw new MalformedHeaders(':status');
  const head = new ResponseHead(status, false);
  for (let i = 0; i < headers.length; i++) head.headers.push(headers[i]);
  // A response ended with its head has an empty body: HTTP/1 says so with content-length, as Envoy does.
  head.contentLength = endStream && contentLength < 0 && status !== 204 && status !== 304 ? 0 : contentLength;
  head.bodyLength = endStream ? 0 : contentLength >= 0 ? contentLength : BODY_CHUNKED;
  return head;
}

/** The HEADERS of a request sent upstream over HTTP/2. */
export function requestHeadersOf(head: RequestHead, scheme: string): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { ':method': head.method, ':path': head.path, ':authority': head.authority, ':scheme': scheme };
  addHeaders(out, head.headers);
  if (head.contentLength >= 0) out['content-length'] = head.contentLength;
  return out;
}

/** A trailer block from node's flat list, pseudo-headers (which trailers may not carry) left out. */
export function trailersOf(raw: readonly string[]): string[] {
  const trailers: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i].charCodeAt(0) !== 0x3a) trailers.push(raw[i], raw[i + 1]);
  return trailers;
}

/** [name, value, ...] as node:http2 takes a header block (trailers). */
export function headersOfList(headers: readonly string[]): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  addHeaders(out, headers);
  return out;
}

/** Adds [name, value, ...] to `out`; a repeated name becomes a list, as node:http2 takes it. */
export function addHeaders(out: OutgoingHttpHeaders, headers: readonly string[]): void {
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i];
    const value = headers[i + 1];
    if (isConnectionSpecific(name, value)) continue;
    const prior = out[name];
    if (prior === undefined) out[name] = value;
    else if (Array.isArray(prior)) prior.push(value);
    else out[name] = [String(prior), value];
  }
}

/**
 * Headers HTTP/2 forbids (RFC 9113 section 8.2.2); nghttp2 would refuse the whole list. `te` is
 * allowed with the one value `trailers`, which gRPC requests carry.
 */
function isConnectionSpecific(name: string, value: string): boolean {
  switch (name) {
    case 'te':
      return value !== 'trailers';
    case 'connection':
    case 'keep-alive':
    case 'proxy-connection':
    case 'transfer-encoding':
    case 'upgrade':
    case 'host':
      return true;
    default:
      return false;
  }
}
