// Envoy 1.16's custom header values (router/header_parser.cc): literal text with `%%` for `%`, and
// `%VARIABLE%` or `%VARIABLE(args)%` expressions, read by Envoy's own state machine so that the
// same strings pass and fail with the same messages. The variables this build fills in are the
// ones a request tells without filter state; the others are refused by name. Pure.

import { FieldError } from '../../config/errors';
import type { RequestHead } from '../../http/message';
import type { DownstreamAddresses } from '../../network/downstream_addresses';
import { socketAddressString } from '../../stream_info/downstream_connection';
import type { TrustedClient } from '../../http/trusted_client';

/** What a header value may be made of, for one request. */
export interface HeaderFormatContext {
  readonly head: RequestHead;
  readonly connection: DownstreamAddresses;
  /** Who sent the request, as the connection manager decided. */
  readonly client: TrustedClient;
  /** As access logs print it: HTTP/1.0, HTTP/1.1 or HTTP/2. */
  readonly protocol: string;
  readonly hostname: string;
}

type Piece = string | ((context: HeaderFormatContext) => string);

export type HeaderFormatter = (context: HeaderFormatContext) => string;

/** Envoy's custom header variables this build cannot fill in yet (they need filter state, metadata, the upstream or TLS facts). */
const NOT_YET = new Set([
  'DOWNSTREAM_LOCAL_URI_SAN',
  'DOWNSTREAM_PEER_URI_SAN',
  'DOWNSTREAM_LOCAL_SUBJECT',
  'DOWNSTREAM_PEER_SUBJECT',
  'DOWNSTREAM_PEER_ISSUER',
  'DOWNSTREAM_TLS_SESSION_ID',
  'DOWNSTREAM_TLS_CIPHER',
  'DOWNSTREAM_TLS_VERSION',
  'DOWNSTREAM_PEER_FINGERPRINT_256',
  'DOWNSTREAM_PEER_FINGERPRINT_1',
  'DOWNSTREAM_PEER_SERIAL',
  'DOWNSTREAM_PEER_CERT',
  'DOWNSTREAM_PEER_CERT_V_START',
  'DOWNSTREAM_PEER_CERT_V_END',
  'REQUESTED_SERVER_NAME',
  'UPSTREAM_METADATA',
  'DYNAMIC_METADATA',
  'UPSTREAM_LOCAL_ADDRESS',
  'UPSTREAM_REMOTE_ADDRESS',
  'PER_REQUEST_STATE',
  'REQ',
  'START_TIME',
  'RESPONSE_FLAGS',
  'RESPONSE_CODE_DETAILS',
]);

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
          pieces.push(variable(pending(pos)));
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
          pieces.push(variable(pending(pos)));
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
  if (pieces.length === 1 && typeof pieces[0] === 'string') {
    const text = pieces[0];
    return () => text;
  }
  return (context) => {
    let value = '';
    for (const piece of pieces) value += typeof piece === 'string' ? piece : piece(context);
    return value;
  };
}

function unescape(text: string): string {
  return text.replaceAll('%%', '%');
}

/** @param expression `NAME` or `NAME(args)`, as between the `%`s */
function variable(expression: string): (context: HeaderFormatContext) => string {
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
    }
  }
  if (NOT_YET.has(name)) throw new FieldError('', `field '${name}' is not supported as a custom header by this build yet`);
  throw new FieldError('', `field '${expression}' not supported as custom header`);
}
