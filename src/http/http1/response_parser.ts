// The client side of HTTP/1.1: parses responses. Which responses have a body depends on the
// request (HEAD) as well as the response, so the connection announces each request first.

import { CodecError } from './codec_error';
import { checkHeadCharacters, lineEnd, parseHeaderFields } from './header_fields';
import { BODY_CHUNKED, BODY_UNTIL_CLOSE, ResponseHead } from '../message';
import { Http1Parser, type ParserCallbacks } from './parser';

const HTTP_1 = 'HTTP/1.';

export class ResponseParser extends Http1Parser<ResponseHead> {
  private headRequest = false;
  private upgrading = false;
  private connecting = false;

  /** `maxHeadersCount`: the cluster's max_headers_count; a response with more header lines is an error. */
  constructor(
    callbacks: ParserCallbacks<ResponseHead>,
    private readonly maxHeadersCount: number,
    keepTrailers = false,
  ) {
    super(callbacks, keepTrailers);
  }

  /**
   * Called before each request is sent: a HEAD request's response has no body; an upgrade's may
   * be 101; a CONNECT's 2xx opens the tunnel.
   */
  expectResponse(method: string, upgrading: boolean): void {
    this.headRequest = method === 'HEAD';
    this.connecting = method === 'CONNECT';
    this.upgrading = upgrading;
  }

  protected headComplete(text: string): number | null {
    checkHeadCharacters(text);
    const eol = lineEnd(text, 0);
    // HTTP/1.x SP 3DIGIT [SP reason-phrase]; a 1.x above 1.1 is read as 1.1 (RFC 9112 section 2.3).
    const minor = text.charCodeAt(7);
    const status = statusCode(text);
    if (!text.startsWith(HTTP_1) || !(minor >= 0x30 && minor <= 0x39) || text.charCodeAt(8) !== 0x20 || status < 100) {
      throw new CodecError(400, 'http1.codec_error');
    }
    if (eol !== 12 && text.charCodeAt(12) !== 0x20) throw new CodecError(400, 'http1.codec_error');
    const head = new ResponseHead(status, minor === 0x30);
    parseHeaderFields(text, eol + 2, head, null, this.maxHeadersCount);

    if (status === 101 || (this.connecting && status >= 200 && status < 300)) {
      // Switching protocols is an answer only to an upgrade: what follows is the new protocol's,
      // to the close; so is what follows a CONNECT's 2xx, whatever framing its head names.
      if (status === 101 && !this.upgrading) throw new CodecError(400, 'http1.unexpected_upgrade');
      head.bodyLength = BODY_UNTIL_CLOSE;
      head.connectionClose = true;
      head.mayEndWithTrailers = false;
      this.callbacks.onMessageHead(head);
      return BODY_UNTIL_CLOSE;
    }
    // Other interim responses are dropped, as Envoy does.
    if (status < 200) return null;
    if (head.http10 && !head.connectionKeepAlive) head.connectionClose = true;
    const transferEncoding = head.chunked || head.transferCodings !== null;
    // Transfer-Encoding overrides Content-Length, but the pair hints at smuggling: this
    // connection is not reused (RFC 9112 section 6.3).
    if (transferEncoding && head.contentLength >= 0) head.connectionClose = true;
    if (this.headRequest || status === 204 || status === 304) {
      head.bodyLength = 0;
    } else if (head.chunked) {
      head.bodyLength = BODY_CHUNKED;
    } else if (transferEncoding || head.contentLength < 0) {
      // A coding other than chunked last: the body runs until the close.
      head.bodyLength = BODY_UNTIL_CLOSE;
      head.connectionClose = true;
    } else {
      head.bodyLength = head.contentLength;
    }
    // The body is framed as it came: filters may reframe the head for the client meanwhile.
    const bodyLength = head.bodyLength;
    // Only a chunked body has a last chunk to carry trailers.
    head.mayEndWithTrailers = bodyLength === BODY_CHUNKED;
    this.callbacks.onMessageHead(head);
    return bodyLength;
  }
}

/** The three digits at 9..11 of a status line, or -1. */
function statusCode(text: string): number {
  let code = 0;
  for (let i = 9; i < 12; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (!(digit >= 0 && digit <= 9)) return -1;
    code = code * 10 + digit;
  }
  return code;
}
