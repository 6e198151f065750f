// The server side of HTTP/1.1: parses requests. HTTP/1.0 is answered with 426, as Envoy does
// unless http_protocol_options.accept_http_10 is set.

import { CodecError } from './codec_error';
import { checkHeadCharacters, lineEnd, parseHeaderFields } from './header_fields';
import { BODY_CHUNKED, RequestHead } from './message_head';
import { Http1Parser } from './parser';

const METHOD = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Visible ASCII and obs-text: no whitespace or control characters. */
const TARGET = /^[\x21-\x7e\x80-\xff]+$/;

export class RequestParser extends Http1Parser<RequestHead> {
  protected headComplete(text: string): number {
    checkHeadCharacters(text);
    const eol = lineEnd(text, 0);
    const sp1 = text.indexOf(' ');
    const sp2 = text.indexOf(' ', sp1 + 1);
    if (sp1 <= 0 || sp2 < 0 || sp2 >= eol) throw new CodecError(400, 'http1.codec_error');
    const method = text.slice(0, sp1);
    const target = text.slice(sp1 + 1, sp2);
    const version = text.slice(sp2 + 1, eol);
    if (!METHOD.test(method) || !TARGET.test(target)) throw new CodecError(400, 'http1.codec_error');
    if (version !== 'HTTP/1.1') {
      if (version === 'HTTP/1.0' || version === 'HTTP/0.9') throw new CodecError(426, 'http1.upgrade_required');
      throw new CodecError(400, 'http1.codec_error');
    }

    const absolute = absoluteForm(target);
    const head = new RequestHead(method, absolute === null ? target : absolute.path);
    parseHeaderFields(text, eol + 2, head, head);
    // A proxy takes the authority of an absolute-form target over Host (RFC 7230 section 5.4).
    if (absolute !== null) head.authority = absolute.authority;

    if (head.otherTransferEncoding) throw new CodecError(501, 'http1.invalid_transfer_encoding');
    if (head.chunked) {
      if (head.contentLength >= 0) throw new CodecError(400, 'http1.content_length_and_chunked_not_allowed');
      head.bodyLength = BODY_CHUNKED;
    } else {
      head.bodyLength = Math.max(0, head.contentLength);
    }
    this.callbacks.onMessageHead(head);
    return head.bodyLength;
  }
}

/** Splits `http://authority/path` (or https); null for any other form. */
function absoluteForm(target: string): { authority: string; path: string } | null {
  const schemeEnd = target.indexOf('://');
  if (schemeEnd < 0 || target.charCodeAt(0) === 0x2f /* '/' */) return null;
  const scheme = target.slice(0, schemeEnd).toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return null;
  const start = schemeEnd + 3;
  const slash = target.indexOf('/', start);
  const query = target.indexOf('?', start);
  const end = slash >= 0 && (query < 0 || slash < query) ? slash : query;
  if (end < 0) return { authority: target.slice(start), path: '/' };
  const path = target.slice(end);
  return { authority: target.slice(start, end), path: path.charCodeAt(0) === 0x3f ? `/${path}` : path };
}
