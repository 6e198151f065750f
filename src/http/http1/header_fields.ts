// Parsing of an HTTP/1 header block (RFC 7230 section 3.2) into a MessageHead: names checked
// as tokens and lower-cased, values trimmed of OWS, connection-level headers interpreted and
// kept out of the forwarded list.

import { CodecError } from './codec_error';
import type { MessageHead, RequestHead } from './message_head';

/** Envoy's default max_headers_count. */
export const MAX_HEADERS_COUNT = 100;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Control characters other than HTAB, CR and LF (those two are checked line by line). */
const FORBIDDEN_IN_HEAD = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
const DIGITS = /^[0-9]{1,15}$/;

const enum Kind {
  EndToEnd,
  HopByHop,
  ContentLength,
  TransferEncoding,
  Connection,
  Host,
  Expect,
}

/** Classifies a lower-cased header name; by length first, since most names are neither. */
function kindOf(name: string): Kind {
  switch (name.length) {
    case 2:
      return name === 'te' ? Kind.HopByHop : Kind.EndToEnd;
    case 4:
      return name === 'host' ? Kind.Host : Kind.EndToEnd;
    case 6:
      return name === 'expect' ? Kind.Expect : Kind.EndToEnd;
    case 7:
      return name === 'upgrade' || name === 'trailer' ? Kind.HopByHop : Kind.EndToEnd;
    case 10:
      return name === 'connection' ? Kind.Connection : name === 'keep-alive' ? Kind.HopByHop : Kind.EndToEnd;
    case 14:
      return name === 'content-length' ? Kind.ContentLength : Kind.EndToEnd;
    case 16:
      return name === 'proxy-connection' ? Kind.HopByHop : Kind.EndToEnd;
    case 17:
      return name === 'transfer-encoding' ? Kind.TransferEncoding : Kind.EndToEnd;
    default:
      return Kind.EndToEnd;
  }
}

/** Rejects control characters no part of a message head may contain. */
export function checkHeadCharacters(head: string): void {
  if (FORBIDDEN_IN_HEAD.test(head)) throw new CodecError(400, 'http1.codec_error');
}

/**
 * The end of the line starting at `pos`: the index of its CRLF. A CR or LF anywhere else in
 * the line (a bare line ending) is an error.
 */
export function lineEnd(head: string, pos: number): number {
  const eol = head.indexOf('\r\n', pos);
  if (eol < 0 || head.indexOf('\r', pos) !== eol || head.indexOf('\n', pos) !== eol + 1) {
    throw new CodecError(400, 'http1.codec_error');
  }
  return eol;
}

/**
 * Parses the header lines of `head` from `pos` to its end (each line ends with CRLF; the
 * blank line is not included) into `message`. `request` is set when parsing a request, whose
 * Host and Expect headers are interpreted too.
 */
export function parseHeaderFields(head: string, pos: number, message: MessageHead, request: RequestHead | null): void {
  let count = 0;
  let transferEncoding: string | null = null;
  let hostSeen = false;
  const end = head.length;
  while (pos < end) {
    if (++count > MAX_HEADERS_COUNT) throw new CodecError(431, 'http1.too_many_headers');
    const eol = lineEnd(head, pos);
    const colon = head.indexOf(':', pos);
    if (colon < 0 || colon > eol) throw new CodecError(400, 'http1.codec_error');
    const rawName = head.slice(pos, colon);
    // Also rejects obs-fold (a line starting with whitespace) and whitespace before the colon.
    if (!TOKEN.test(rawName)) throw new CodecError(400, 'http1.codec_error');
    const name = rawName.toLowerCase();
    let vs = colon + 1;
    let ve = eol;
    while (vs < ve && isOws(head.charCodeAt(vs))) vs++;
    while (ve > vs && isOws(head.charCodeAt(ve - 1))) ve--;
    const value = head.slice(vs, ve);
    pos = eol + 2;

    switch (kindOf(name)) {
      case Kind.EndToEnd:
        message.headers.push(name, value);
        break;
      case Kind.HopByHop:
        break;
      case Kind.ContentLength:
        setContentLength(message, value);
        break;
      case Kind.TransferEncoding:
        transferEncoding = transferEncoding === null ? value : `${transferEncoding}, ${value}`;
        break;
      case Kind.Connection:
        addConnectionTokens(message, value);
        break;
      case Kind.Host:
        if (request === null) {
          message.headers.push(name, value);
        } else {
          if (hostSeen) throw new CodecError(400, 'http1.codec_error');
          hostSeen = true;
          request.authority = value;
        }
        break;
      case Kind.Expect:
        if (request !== null && value.toLowerCase() === '100-continue') request.expectContinue = true;
        else message.headers.push(name, value);
        break;
    }
  }
  if (transferEncoding !== null) setTransferEncoding(message, transferEncoding);
}

function isOws(c: number): boolean {
  return c === 0x20 || c === 0x09;
}

function setContentLength(message: MessageHead, value: string): void {
  if (!DIGITS.test(value)) throw new CodecError(400, 'http1.content_length_invalid');
  const length = Number(value);
  if (message.contentLength >= 0 && message.contentLength !== length) {
    throw new CodecError(400, 'http1.content_length_invalid');
  }
  message.contentLength = length;
}

function setTransferEncoding(message: MessageHead, value: string): void {
  const codings = value.toLowerCase().split(',');
  if (codings[codings.length - 1].trim() === 'chunked') message.chunked = true;
  if (codings.length !== 1 || !message.chunked) message.otherTransferEncoding = true;
}

function addConnectionTokens(message: MessageHead, value: string): void {
  const lower = value.toLowerCase();
  // The common single-token values need no splitting.
  if (lower === 'keep-alive') {
    message.connectionKeepAlive = true;
    return;
  }
  if (lower === 'close') {
    message.connectionClose = true;
    return;
  }
  for (const raw of lower.split(',')) {
    const token = raw.trim();
    if (token === 'close') message.connectionClose = true;
    else if (token === 'keep-alive') message.connectionKeepAlive = true;
    else if (token !== '') (message.connectionTokens ??= []).push(token);
  }
}
