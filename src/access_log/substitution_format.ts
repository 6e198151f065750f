// Envoy 1.16's SubstitutionFormatParser: a format string is literal text and command operators,
// `%NAME%`, `%NAME(args)%` or `%NAME(args):N%` (N: the longest value, in characters). A `%`
// that does not start a valid operator, `%%` included, is a configuration error, as in Envoy.
// Every provider's text is a byte string (src/common/byte_string.ts): header values as they came,
// the format's own text and any other Unicode as UTF-8, the bytes Envoy would write.
// Pure: the format in, its providers out; errors are FieldErrors without a path (the caller's).

import { utf8Bytes } from '../common/byte_string';
import { FieldError } from '../config/errors';
import type { JsonValue } from '../config/json';
import { proxySpelling } from '../config/names';
import type { MessageHead, RequestHead, ResponseHead } from '../http/message';
import { DateFormat, DefaultDateFormat, NEWLINE_SPECIFIER } from './date_format';
import type { FormatContext, FormatterProvider } from './format_context';
import { streamInfoOperator } from './stream_info_operators';

/** What follows a `%`: the operator's name, its arguments, its length limit and the closing `%`. */
const COMMAND_SOURCE = '%([A-Z0-9_]+)(?:\\(([^)]*)\\))?(?::([0-9]+))?%';

/** @throws FieldError for an operator Envoy 1.16 would refuse or this build cannot run */
export function parseFormat(format: string): FormatterProvider[] {
  // Sticky, so it matches at `pos` only; its own, as a sticky regex keeps a position.
  const operatorPattern = new RegExp(COMMAND_SOURCE, 'y');
  const providers: FormatterProvider[] = [];
  let literal = '';
  for (let pos = 0; pos < format.length; pos++) {
    if (format[pos] !== '%') {
      literal += format[pos];
      continue;
    }
    if (literal !== '') {
      providers.push(plain(literal));
      literal = '';
    }
    operatorPattern.lastIndex = pos;
    const match = operatorPattern.exec(format);
    if (match === null) throw new FieldError('', `Incorrect configuration: ${format}. Couldn't find valid command at position ${pos}`);
    const [token, name, args, maxLength] = match;
    providers.push(command(token.slice(1, -1), name!, args, maxLength === undefined ? null : Number(maxLength)));
    pos += token.length - 1;
  }
  if (literal !== '' || format === '') providers.push(plain(literal));
  return providers;
}

function plain(literal: string): FormatterProvider {
  const text = utf8Bytes(literal);
  return { text: () => text, value: () => text, literal: text };
}

function command(token: string, name: string, args: string | undefined, maxLength: number | null): FormatterProvider {
  switch (name) {
    case 'REQ':
    case 'RESP':
    case 'TRAILER':
      return headerOperator(token, name, args, maxLength);
    case 'DYNAMIC_METADATA':
      if (args === undefined) break;
      return dynamicMetadata(args.split(':'), maxLength);
    case 'START_TIME':
      return dateOperator(token, args, maxLength, (context) => context.info.startTime);
    case 'DOWNSTREAM_PEER_CERT_V_START':
      return dateOperator(token, args, maxLength, (context) => context.info.connection.ssl?.peerValidFrom?.getTime() ?? null);
    case 'DOWNSTREAM_PEER_CERT_V_END':
      return dateOperator(token, args, maxLength, (context) => context.info.connection.ssl?.peerExpiration?.getTime() ?? null);
    case 'LOCAL_REPLY_BODY':
      // An access log is not a local reply: Envoy gives it an empty body.
      return plain('');
    case 'FILTER_STATE':
      throw new FieldError('', `${token}: this build keeps no filter state (it would always be unset)`);
  }
  const operator = args === undefined && maxLength === null ? streamInfoOperator(name) : undefined;
  if (operator === undefined) throw new FieldError('', `Not supported field in StreamInfo: ${token}`);
  return operator;
}

function truncate(text: string, maxLength: number | null): string {
  return maxLength === null ? text : text.slice(0, maxLength);
}

function headerOperator(token: string, name: 'REQ' | 'RESP' | 'TRAILER', args: string | undefined, maxLength: number | null): FormatterProvider {
  if (args === undefined) throw new FieldError('', `Not supported field in StreamInfo: ${token}`);
  const names = args.split('?');
  if (names.length > 2) throw new FieldError('', `More than 1 alternative header specified in token: ${token}`);
  if (names.some((n) => n.includes('\n'))) throw new FieldError('', 'Invalid header configuration. Format string contains newline.');
  const main = names[0]!.toLowerCase();
  const alternative = (names[1] ?? '').toLowerCase();
  // Each name's lookup is chosen once: this runs for every logged request.
  const first = headerLookup(name, main);
  const second = alternative === '' ? null : headerLookup(name, alternative);
  const text = (context: FormatContext): string | null => {
    let value = first(context);
    if (value === undefined && second !== null) value = second(context);
    return value === undefined ? null : truncate(value, maxLength);
  };
  return { text, value: text };
}

type HeaderLookup = (context: FormatContext) => string | undefined;

/** How `header` (lower case) is read from a REQ, RESP or TRAILER operator's message. */
function headerLookup(operator: 'REQ' | 'RESP' | 'TRAILER', header: string): HeaderLookup {
  if (operator === 'RESP') return (context) => responseHeader(context.response, header);
  if (operator === 'TRAILER') return (context) => (context.trailers === null ? undefined : listHeader(context.trailers, header));
  switch (header) {
    case ':method':
      return (context) => context.request?.method;
    case ':path':
      return (context) => context.request?.path;
    case ':scheme':
      return (context) => context.request?.scheme;
    case ':authority':
    case 'host':
      return (context) => (context.request === null || context.request.authority === '' ? undefined : context.request.authority);
    default:
      return (context) => (context.request === null ? undefined : messageHeader(context.request, header));
  }
}

/** The first value of `name` (lower case); the request's pseudo-headers are its fields. */
export function requestHeader(head: RequestHead | null, name: string): string | undefined {
  if (head === null) return undefined;
  switch (name) {
    case ':method':
      return head.method;
    case ':path':
      return head.path;
    case ':scheme':
      return head.scheme;
    // Envoy's header map answers `host` with :authority.
    case ':authority':
    case 'host':
      return head.authority === '' ? undefined : head.authority;
  }
  return messageHeader(head, name);
}

function responseHeader(head: ResponseHead | null, name: string): string | undefined {
  if (head === null) return undefined;
  return name === ':status' ? String(head.status) : messageHeader(head, name);
}

/** A header of a message head; content-length, which the codecs keep as framing, as Envoy's header map has it. */
function messageHeader(head: MessageHead, name: string): string | undefined {
  const value = listHeader(head.headers, name);
  if (value !== undefined || name !== 'content-length' || head.contentLength < 0) return value;
  return String(head.contentLength);
}

function listHeader(headers: readonly string[], name: string): string | undefined {
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === name) return headers[i + 1];
  return undefined;
}

function dateOperator(token: string, args: string | undefined, maxLength: number | null, time: (context: FormatContext) => number | null): FormatterProvider {
  if (maxLength !== null) throw new FieldError('', `${token}: a date takes no length limit`);
  const format = args ?? '';
  if (NEWLINE_SPECIFIER.test(format)) throw new FieldError('', 'Invalid header configuration. Format string contains newline.');
  const date = format === '' ? new DefaultDateFormat() : new DateFormat(format);
  const text = (context: FormatContext): string | null => {
    const ms = time(context);
    return ms === null ? null : date.format(ms);
  };
  return { text, value: text };
}

/** DYNAMIC_METADATA(namespace:key:...): the value as JSON; the namespace's whole struct without keys. */
function dynamicMetadata(path: readonly string[], maxLength: number | null): FormatterProvider {
  const [name, ...keys] = path;
  // Filters record their metadata under their names in our spelling.
  const namespace = proxySpelling(name!);
  const value = (context: FormatContext): JsonValue => {
    const struct = context.info.dynamicMetadata?.get(namespace);
    if (struct === undefined) return null;
    let current: unknown = struct;
    for (const key of keys) {
      if (typeof current !== 'object' || current === null || Array.isArray(current) || !Object.hasOwn(current, key)) return null;
      current = (current as Record<string, unknown>)[key];
    }
    return current === undefined ? null : (current as JsonValue);
  };
  return {
    text: (context) => {
      const found = value(context);
      return found === null ? null : truncate(utf8Bytes(JSON.stringify(found)), maxLength);
    },
    value: (context) => jsonBytes(value(context)),
  };
}

/** `value` with every string in it, keys included, as UTF-8 bytes. */
function jsonBytes(value: JsonValue): JsonValue {
  if (typeof value === 'string') return utf8Bytes(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => jsonBytes(item));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [utf8Bytes(key), jsonBytes(item)]));
}
