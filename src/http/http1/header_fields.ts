// Parsing of an HTTP/1 header block (RFC 9112 section 5) into a MessageHead: names checked
// as tokens and lower-cased, values trimmed of OWS, connection-level headers interpreted and
// kept out of the forwarded list. Framing headers are read as strictly as RFC 9112 section 6
// asks: whatever two parsers could read differently is an error, never a guess.

import { CodecError } from './codec_error';
import { TOKEN, TRANSFER_CODING } from './grammar';
import type { MessageHead, RequestHead } from '../message';

/** Envoy's default max_headers_count. */
export const MAX_HEADERS_COUNT = 100;

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
 * The field name of the line at `pos`, before its colon. It must be a token, which also rejects
 * obs-fold (a line starting with whitespace) and whitespace before the colon.
 */
function fieldName(text: string, pos: number, eol: number): string {
  const colon = text.indexOf(':', pos);
  const name = colon < 0 || colon > eol ? '' : text.slice(pos, colon);
  if (!TOKEN.test(name)) throw new CodecError(400, 'http1.codec_error');
  return name;
}

/** A trailer field line (without its CRLF), checked as a header line is: its lower-case name and its value. */
export function trailerField(line: string): [string, string] {
  checkHeadCharacters(line);
  if (line.includes('\r')) throw new CodecError(400, 'http1.codec_error');
  const name = fieldName(line, 0, line.length);
  return [name.toLowerCase(), trimOws(line, name.length + 1, line.length)];
}

/**
 * Parses the header lines of `head` from `pos` to its end (each line ends with CRLF; the
 * blank line is not included) into `message`, and returns how many there were. `request` is
 * set when parsing a request, whose Host and Expect headers are interpreted too (the request
 * parser checks the Host value). More than `maxHeadersCount` lines is an error (431).
 */
export function parseHeaderFields(head: string, pos: number, message: MessageHead, request: RequestHead | null, maxHeadersCount = MAX_HEADERS_COUNT): number {
  let count = 0;
  let transferEncoding: string | null = null;
  let hostSeen = false;
  const end = head.length;
  while (pos < end) {
    if (++count > maxHeadersCount) throw tooManyHeaders();
    const eol = lineEnd(head, pos);
    const rawName = fieldName(head, pos, eol);
    const name = rawName.toLowerCase();
    const value = trimOws(head, pos + rawName.length + 1, eol);
    pos = eol + 2;

    switch (kindOf(name)) {
      case Kind.EndToEnd:
        message.headers.push(name, value);
        break;
      case Kind.HopByHop:
        if (name === 'upgrade') message.upgrade = value;
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
  if (request !== null && request.upgrade !== null && (request.upgrade.toLowerCase() === 'h2c' || !request.connectionTokens?.includes('upgrade'))) {
    request.upgrade = null;
  }
  return count;
}

/** Envoy's answer to more headers than max_headers_count. */
export function tooManyHeaders(): CodecError {
  return new CodecError(431, 'http1.too_many_headers');
}

function isOws(c: number): boolean {
  return c === 0x20 || c === 0x09;
}

/** text[start, end) without OWS: only SP and HTAB (String.trim() would also strip U+00A0). */
function trimOws(text: string, start = 0, end = text.length): string {
  while (start < end && isOws(text.charCodeAt(start))) start++;
  while (end > start && isOws(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

/**
 * A decimal length, or a list of identical ones (`5, 5`: a header duplicated on the way, which
 * RFC 9110 section 8.6 lets a recipient read as one). A sign, differing values, or anything
 * else is an error.
 */
function setContentLength(message: MessageHead, value: string): void {
  let digits = value;
  if (!DIGITS.test(value)) {
    const values = value.split(',').map((v) => trimOws(v));
    if (!values.every((v) => v === values[0]) || !DIGITS.test(values[0])) {
      throw new CodecError(400, 'http1.content_length_invalid');
    }
    digits = values[0];
  }
  const length = decimal(digits);
  if (message.contentLength >= 0 && message.contentLength !== length) {
    throw new CodecError(400, 'http1.content_length_invalid');
  }
  message.contentLength = length;
}

/** The value of 1 to 15 decimal digits: Number() would first hash the string just parsed. */
function decimal(digits: string): number {
  let value = 0;
  for (let i = 0; i < digits.length; i++) value = value * 10 + (digits.charCodeAt(i) - 0x30);
  return value;
}

/**
 * Reads the Transfer-Encoding list (all its lines joined). Coding names are case-insensitive;
 * chunked may appear once, last (RFC 9112 section 7). Empty elements, which RFC 9110 would let
 * pass, are refused: parsers disagree on `chunked,` and an empty line. Whether a message may
 * carry the codings found is for the request or response parser to say.
 */
function setTransferEncoding(message: MessageHead, value: string): void {
  if (value === 'chunked') {
    message.chunked = true;
    return;
  }
  let codings: string | null = null;
  for (const element of value.split(',')) {
    const coding = trimOws(element);
    const name = TRANSFER_CODING.exec(coding)?.[1];
    if (name === undefined || message.chunked) throw new CodecError(400, 'http1.invalid_transfer_encoding');
    if (name.toLowerCase() !== 'chunked') {
      codings = codings === null ? coding : `${codings}, ${coding}`;
      continue;
    }
    // Chunked defines no parameters (RFC 9112 section 7).
    if (name !== coding) throw new CodecError(400, 'http1.invalid_transfer_encoding');
    message.chunked = true;
  }
  message.transferCodings = codings;
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
    const token = trimOws(raw);
    if (token === 'close') message.connectionClose = true;
    else if (token === 'keep-alive') message.connectionKeepAlive = true;
    else if (token !== '') (message.connectionTokens ??= []).push(token);
  }
}
