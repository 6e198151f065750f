// The server side of HTTP/1.1: parses requests. HTTP/1.0 is answered with 426, as Envoy does,
// unless http_protocol_options.accept_http_10 is set.

import type { HeadersWithUnderscoresAction } from '../../config/model';
import { isValidAuthority } from '../authority';
import { dropUnderscoreHeaders, hasUnderscoreHeader } from '../underscore_headers';
import { CodecError } from './codec_error';
import type { Http1CodecStats } from './codec_stats';
import { checkHeadCharacters, lineEnd, parseHeaderFields, tooManyHeaders } from './header_fields';
import { BODY_CHUNKED, BODY_UNTIL_CLOSE, RequestHead } from '../message';
import { isKnownMethod } from './methods';
import { Http1Parser, type ParserCallbacks } from './parser';

/**
 * The connection manager's http_protocol_options and common_http_protocol_options this codec
 * acts on (Envoy's Http1Settings and the codec's limits).
 */
export interface Http1Settings {
  readonly acceptHttp10: boolean;
  /** The authority of an HTTP/1.0 request without Host; '' for none. */
  readonly defaultHostForHttp10: string;
  readonly maxHeadersCount: number;
  readonly headersWithUnderscoresAction: HeadersWithUnderscoresAction;
}

/** Visible ASCII: a URI has no whitespace, control characters or raw non-ASCII bytes. */
const TARGET = /^[\x21-\x7e]+$/;
const HTTP_1_1 = 'HTTP/1.1';
const VERSION = /^HTTP\/([0-9])\.([0-9])$/;

export class RequestParser extends Http1Parser<RequestHead> {
  constructor(
    callbacks: ParserCallbacks<RequestHead>,
    private readonly settings: Http1Settings,
    private readonly stats: Http1CodecStats,
    keepTrailers = false,
  ) {
    super(callbacks, keepTrailers);
  }

  protected headComplete(text: string): number {
    checkHeadCharacters(text);
    const eol = lineEnd(text, 0);
    const sp1 = text.indexOf(' ');
    const sp2 = text.indexOf(' ', sp1 + 1);
    if (sp1 <= 0 || sp2 < 0 || sp2 >= eol) throw new CodecError(400, 'http1.codec_error');
    const method = text.slice(0, sp1);
    const target = text.slice(sp1 + 1, sp2);
    if (!isKnownMethod(method) || !TARGET.test(target)) throw new CodecError(400, 'http1.codec_error');
    const version = text.slice(sp2 + 1, eol);
    const http10 = version === HTTP_1_1 ? false : this.isHttp10(version);

    let path = target;
    let authority: string | null = null;
    if (method === 'CONNECT') {
      // authority-form, CONNECT's only one (RFC 9112 section 3.2.3): the tunnel's far end.
      if (!isValidAuthority(target)) throw new CodecError(400, 'http.invalid_authority');
      path = '';
      authority = target;
    } else if (target.charCodeAt(0) !== 0x2f /* '/' */ && (target !== '*' || method !== 'OPTIONS')) {
      // origin-form, or asterisk-form for OPTIONS; absolute-form is the only other one we take.
      const absolute = absoluteForm(target);
      path = absolute.path;
      authority = absolute.authority;
    }
    const head = new RequestHead(method, path, http10);
    const settings = this.settings;
    if (settings.headersWithUnderscoresAction === 'ALLOW') parseHeaderFields(text, eol + 2, head, head, settings.maxHeadersCount);
    else this.screenUnderscores(head, parseHeaderFields(text, eol + 2, head, head, Infinity));
    // Host must be valid even where a target overrides it (RFC 9112 section 3.2); an empty one is
    // well-formed, and the connection manager answers it with 400 itself.
    if (head.authority !== '' && !isValidAuthority(head.authority)) throw new CodecError(400, 'http.invalid_authority');
    // A proxy takes the authority of an absolute-form target over Host (RFC 9112 section 3.2.2).
    if (authority !== null) head.authority = authority;
    if (http10) this.readHttp10(head);

    if (head.chunked || head.transferCodings !== null) {
      // A body whose length cannot be known for sure is refused (RFC 9112 sections 6.1, 6.3).
      if (http10 || !head.chunked) throw new CodecError(400, 'http1.invalid_transfer_encoding');
      // Both framings in one request is how smuggling starts: refused, as llhttp and Envoy do.
      if (head.contentLength >= 0) throw new CodecError(400, 'http1.content_length_and_chunked_not_allowed');
      // Codings before chunked that we cannot decode, as Envoy answers them.
      if (head.transferCodings !== null) throw new CodecError(501, 'http1.invalid_transfer_encoding');
      head.bodyLength = BODY_CHUNKED;
    } else {
      head.bodyLength = Math.max(0, head.contentLength);
    }
    // What follows an upgrade's or a CONNECT's head is the new protocol's, whatever the head said
    // of a body: this connection carries no more HTTP/1 (Envoy's codec stops parsing there too).
    if (head.upgrade !== null || method === 'CONNECT') head.bodyLength = BODY_UNTIL_CLOSE;
    // The body is framed as it came: filters may reframe the head for the upstream meanwhile.
    const bodyLength = head.bodyLength;
    this.callbacks.onMessageHead(head);
    return bodyLength;
  }

  /**
   * True for HTTP/1.0, false for HTTP/1.1 and the later 1.x a server treats as 1.1 (RFC 9112
   * section 2.3). 1.0 without accept_http_10, and 0.9, are answered 426 as in Envoy.
   */
  private isHttp10(version: string): boolean {
    const match = VERSION.exec(version);
    if (match === null || (match[1] !== '0' && match[1] !== '1')) throw new CodecError(400, 'http1.codec_error');
    if (match[1] === '1' && match[2] !== '0') return false;
    if (match[1] === '0' || !this.settings.acceptHttp10) throw new CodecError(426, 'http1.upgrade_required');
    return true;
  }

  /**
   * headers_with_underscores_action REJECT_REQUEST (400) or DROP_HEADER; the headers dropped do
   * not count against max_headers_count, as in Envoy, so the count is checked here.
   */
  private screenUnderscores(head: RequestHead, count: number): void {
    if (this.settings.headersWithUnderscoresAction === 'REJECT_REQUEST') {
      if (hasUnderscoreHeader(head.headers)) {
        this.stats.requests_rejected_with_underscores_in_headers.inc();
        throw new CodecError(400, 'http1.unexpected_underscore');
      }
    } else {
      const dropped = dropUnderscoreHeaders(head.headers);
      if (dropped > 0) this.stats.dropped_headers_with_underscores.add(dropped);
      count -= dropped;
    }
    if (count > this.settings.maxHeadersCount) throw tooManyHeaders();
  }

  /** HTTP/1.0: keep-alive is opt-in, Host optional, and Expect is to be ignored (RFC 9110 10.1.1). */
  private readHttp10(head: RequestHead): void {
    if (!head.connectionKeepAlive) head.connectionClose = true;
    if (head.authority === '') head.authority = this.settings.defaultHostForHttp10;
    head.expectContinue = false;
  }
}

/** `http://authority/path` (or https, case-insensitive) split; anything else is an error. */
function absoluteForm(target: string): { authority: string; path: string } {
  const schemeEnd = target.indexOf('://');
  const scheme = schemeEnd < 0 ? '' : target.slice(0, schemeEnd).toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') throw new CodecError(400, 'http1.codec_error');
  const start = schemeEnd + 3;
  let end = start;
  while (end < target.length && !isAuthorityEnd(target.charCodeAt(end))) end++;
  const authority = target.slice(start, end);
  // Userinfo is deprecated and a known way to mislead (RFC 9110 section 4.2.4): an error.
  if (!isValidAuthority(authority)) throw new CodecError(400, 'http.invalid_authority');
  const path = target.slice(end);
  return { authority, path: path.charCodeAt(0) === 0x2f ? path : `/${path}` };
}

/** '/', '?' or '#': where the authority of a URI ends. */
function isAuthorityEnd(c: number): boolean {
  return c === 0x2f || c === 0x3f || c === 0x23;
}
