// Envoy 1.16's custom header values (router/header_parser.cc): literal text with `%%` for `%`, and
// `%VARIABLE%` or `%VARIABLE(args)%` expressions, read by Envoy's own state machine so that the
// same strings pass and fail with the same messages. The variables this build fills in are the
// ones a request, its connection, its upstream host and its stream record tell; those that need
// filter state (which no filter of this build sets) are refused by name. A value is a byte string
// (src/common/byte_string.ts), as the headers it joins: the configuration's text and whatever else
// is Unicode (certificate facts, metadata, details) goes on the wire as UTF-8, as in Envoy. Pure.

import { utf8Bytes } from '../../common/byte_string';
import { FieldError } from '../../config/errors';
import { DateFormat, DefaultDateFormat, NEWLINE_SPECIFIER } from '../../access_log/date_format';
import { requestHeader } from '../../access_log/substitution_format';
import type { RequestHead } from '../../http/message';
import type { DownstreamAddresses } from '../../network/downstream_addresses';
import { socketAddressString } from '../../stream_info/downstream_connection';
import { sslTextFact } from '../../stream_info/ssl_text_facts';
import { responseFlagsString } from '../../stream_info/response_flag_names';
import type { SslConnectionInfo, StreamInfo } from '../../stream_info/stream_info';
import { metadataText, parseMetadataPath } from './upstream_metadata';
import type { TrustedClient } from '../../http/trusted_client';

/** What a header value may be made of, for one request. */
export interface HeaderFormatContext {
  readonly head: RequestHead;
  readonly connection: DownstreamAddresses;
  /** Who sent the request, as the connection manager decided. */
  readonly client: TrustedClient;
  /** As access logs print it: HTTP/1.0, HTTP/1.1 or HTTP/2. */
  readonly protocol: string;
  /** As UTF-8 bytes. */
  readonly hostname: string;
  /** The downstream TLS session; null on a plaintext connection. */
  readonly ssl: SslConnectionInfo | null;
  /** When the stream began, ms since the epoch: START_TIME. */
  readonly startTime: number;
  /** The upstream host the router picked last; null before it picks one (request headers see none, as in Envoy). */
  upstreamHost: { readonly addressString: string; readonly metadata: Readonly<Record<string, unknown>> } | null;
  /** The stream's record; kept whenever a header value reads it (see HeaderFormatter.readsStreamInfo). */
  readonly info: StreamInfo | null;
}

/** A variable's value for one request. */
type Variable = (context: HeaderFormatContext) => string;

type Piece = string | Variable;

export interface HeaderFormatter {
  (context: HeaderFormatContext): string;
  /** It prints RESPONSE_FLAGS or RESPONSE_CODE_DETAILS: the connection manager must keep a StreamInfo. */
  readonly readsStreamInfo: boolean;
  /** Its text when it has no variable (`%%` read as `%`), which needs no request to print; null otherwise. */
  readonly literal: string | null;
}

/** The variables read from the stream's record. */
const STREAM_INFO_VARIABLES: ReadonlySet<string> = new Set(['RESPONSE_FLAGS', 'RESPONSE_CODE_DETAILS']);

/** Envoy's custom header variables this build cannot fill in yet (they need filter state, metadata, the upstream or TLS facts). */
const NOT_YET = new Set(['REQUESTED_SERVER_NAME', 'DYNAMIC_METADATA', 'UPSTREAM_LOCAL_ADDRESS', 'PER_REQUEST_STATE']);

const enum State {
  Literal,
  VariableName,
  ExpectArray,
  ExpectString,
  String,
  ExpectArrayDelimiterOrEnd,
  ExpectArgsEnd,
  ExpectVariableEnd,
}

const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\v' || c === '\f' || c === '\r';

/** @throws FieldError (path '') with Envoy's message for a value it would refuse, or for a variable this build cannot fill in */
export function parseHeaderFormat(format: string): HeaderFormatter {
  const pieces: Piece[] = [];
  let state = State.Literal;
  let start = 0;
  const pending = (pos: number): string => format.slice(start, pos);
  let readsStreamInfo = false;
  const pushVariable = (expression: string): void => {
    readsStreamInfo ||= STREAM_INFO_VARIABLES.has(expression);
    pieces.push(variable(expression));
  };
  for (let pos = 0; pos < format.length; pos++) {
    const c = format[pos]!;
    const hasNext = pos + 1 < format.length;
    switch (state) {
      case State.Literal:
        if (c !== '%') break;
        if (!hasNext) throw new FieldError('', `Invalid header configuration. Un-escaped % at position ${pos}`);
        if (format[pos + 1] === '%') {
          pos++;
          break;
        }
        if (pos > start) pieces.push(unescape(pending(pos)));
        state = State.VariableName;
        start = pos + 1;
        break;
      case State.VariableName:
        if (c === '%') {
          pushVariable(pending(pos));
          start = pos + 1;
          state = State.Literal;
        } else if (c === '(') {
          state = State.ExpectArray;
        }
        break;
      case State.ExpectArray:
        if (c === '[') state = State.ExpectString;
        else if (!isSpace(c)) state = State.String;
        break;
      case State.ExpectArrayDelimiterOrEnd:
        if (c === ',') state = State.ExpectString;
        else if (c === ']') state = State.ExpectArgsEnd;
        else if (!isSpace(c)) throw new FieldError('', `Invalid header configuration. Expecting ',', ']', or whitespace after '${pending(pos)}', but found '${c}'`);
        break;
      case State.ExpectString:
        if (c === '"') state = State.String;
        else if (!isSpace(c)) throw new FieldError('', `Invalid header configuration. Expecting '"' or whitespace after '${pending(pos)}', but found '${c}'`);
        break;
      case State.String:
        if (c === '\\') {
          if (!hasNext) throw new FieldError('', `Invalid header configuration. Un-terminated backslash in JSON string after '${pending(pos)}'`);
          pos++;
        } else if (c === ')') {
          state = State.ExpectVariableEnd;
        } else if (c === '"') {
          state = State.ExpectArrayDelimiterOrEnd;
        }
        break;
      case State.ExpectArgsEnd:
        if (c === ')') state = State.ExpectVariableEnd;
        else if (!isSpace(c)) throw new FieldError('', `Invalid header configuration. Expecting ')' or whitespace after '${pending(pos)}', but found '${c}'`);
        break;
      case State.ExpectVariableEnd:
        if (c === '%') {
          pushVariable(pending(pos));
          start = pos + 1;
          state = State.Literal;
        } else if (!isSpace(c)) {
          throw new FieldError('', `Invalid header configuration. Expecting '%' or whitespace after '${pending(pos)}', but found '${c}'`);
        }
        break;
    }
  }
  if (state !== State.Literal) throw new FieldError('', `Invalid header configuration. Un-terminated variable expression '${pending(format.length)}'`);
  if (format.length > start) pieces.push(unescape(pending(format.length)));
  const only = pieces.length === 0 ? '' : pieces.length === 1 ? pieces[0] : null;
  if (typeof only === 'string') {
    const text = only;
    return Object.assign(() => text, { readsStreamInfo, literal: text });
  }
  return Object.assign(
    (context: HeaderFormatContext) => {
      let value = '';
      for (const piece of pieces) value += typeof piece === 'string' ? piece : piece(context);
      return value;
    },
    { readsStreamInfo, literal: null },
  );
}

/** A literal piece: `%%` is `%`, and its text goes out as UTF-8. */
function unescape(text: string): string {
  return utf8Bytes(text.replaceAll('%%', '%'));
}

/** @param expression `NAME` or `NAME(args)`, as between the `%`s */
function variable(expression: string): Variable {
  const paren = expression.indexOf('(');
  const name = paren < 0 ? expression : expression.slice(0, paren);
  if (paren < 0) {
    switch (name) {
      case 'DOWNSTREAM_REMOTE_ADDRESS':
        return (c) => socketAddressString(c.client.ip, c.client.port);
      case 'DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT':
        return (c) => c.client.ip;
      case 'DOWNSTREAM_LOCAL_ADDRESS':
        return (c) => socketAddressString(c.connection.localAddress, c.connection.localPort);
      case 'DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT':
        return (c) => c.connection.localAddress ?? '';
      case 'DOWNSTREAM_LOCAL_PORT':
        return (c) => (c.connection.localPort === undefined ? '' : String(c.connection.localPort));
      case 'PROTOCOL':
        return (c) => c.protocol;
      case 'HOSTNAME':
        return (c) => c.hostname;
      case 'UPSTREAM_REMOTE_ADDRESS':
        return (c) => c.upstreamHost?.addressString ?? '';
      // Envoy's short flags (`-` for none), and the details once set; as when the value is made.
      case 'RESPONSE_FLAGS':
        return (c) => (c.info === null ? '-' : responseFlagsString(c.info.responseFlags));
      case 'RESPONSE_CODE_DETAILS':
        return (c) => utf8Bytes(c.info?.responseCodeDetails ?? '');
      case 'DOWNSTREAM_PEER_CERT_V_START':
        return certificateDate((ssl) => ssl.peerValidFrom);
      case 'DOWNSTREAM_PEER_CERT_V_END':
        return certificateDate((ssl) => ssl.peerExpiration);
    }
    // The TLS session's facts; '' on a plaintext connection.
    const tls = sslTextFact(name);
    if (tls !== undefined) return (c) => (c.ssl === null ? '' : utf8Bytes(tls(c.ssl) ?? ''));
  }
  // Envoy matches these by prefix, so that `REQ (x)` reaches the argument check and fails there.
  if (name.startsWith('START_TIME')) return startTime(name, expression);
  if (name.startsWith('UPSTREAM_METADATA')) {
    const path = parseMetadataPath(expression.slice('UPSTREAM_METADATA'.length));
    return (c) => (c.upstreamHost === null ? '' : utf8Bytes(metadataText(c.upstreamHost.metadata, path)));
  }
  if (name.startsWith('REQ') && !NOT_YET.has(name)) return requestHeaderVariable(expression.slice('REQ'.length));
  if (NOT_YET.has(name)) throw new FieldError('', `field '${name}' is not supported as a custom header by this build yet`);
  throw new FieldError('', `field '${expression}' not supported as custom header`);
}

/** START_TIME or START_TIME(format): the access log's date formats. */
function startTime(name: string, expression: string): Variable {
  if (name !== 'START_TIME') throw new FieldError('', `Not supported field in StreamInfo: ${name}`);
  const open = expression.indexOf('(');
  const pattern = open < 0 ? '' : expression.slice(open + 1, expression.lastIndexOf(')'));
  if (NEWLINE_SPECIFIER.test(pattern)) throw new FieldError('', 'Invalid header configuration. Format string contains newline.');
  const format = pattern === '' ? new DefaultDateFormat() : new DateFormat(pattern);
  return (c) => format.format(c.startTime);
}

/** REQ(header-name): the request's first value of that header, '' without one. */
function requestHeaderVariable(params: string): Variable {
  const trimmed = params.trim();
  if (trimmed === '' || !trimmed.startsWith('(')) throw new FieldError('', `Invalid header configuration. Expected format REQ(<header-name>), actual format REQ${trimmed}`);
  const header = trimmed.slice(1, -1).toLowerCase();
  return (c) => requestHeader(c.head, header) ?? '';
}

/** A certificate date in Envoy's default format, '' without TLS or a peer certificate. */
function certificateDate(read: (ssl: SslConnectionInfo) => Date | null): Variable {
  const format = new DefaultDateFormat();
  return (c) => {
    const date = c.ssl === null ? null : read(c.ssl);
    return date === null ? '' : format.format(date.getTime());
  };
}
