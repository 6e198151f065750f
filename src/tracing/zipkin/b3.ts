// B3 propagation (openzipkin/b3-propagation) as Envoy 1.16's Zipkin tracer reads and writes it:
// the x-b3-* headers, or the single `b3` header, name the calling span and whether the trace is
// sampled; the request sent upstream names ours. Ids are kept as Zipkin prints them: 16 (or, for
// a 128-bit trace id, 32) lower-case hexadecimal digits. Pure.

import { firstHeaderValue, setHeader } from '../../http/message';

/** The span a request's headers name. */
export interface SpanContext {
  /** The upper 64 bits of a 128-bit trace id; null for a 64-bit one. */
  readonly traceIdHigh: string | null;
  readonly traceId: string;
  readonly spanId: string;
  /** Null when none (or zero). */
  readonly parentId: string | null;
  readonly sampled: boolean;
}

/** The headers name a span, but not in a form Envoy reads: the request is not traced. */
export const MALFORMED = 'malformed';

const ZERO_ID = '0000000000000000';
/** traceid128-spanid-1-parentid */
const B3_MAX_LENGTH = 32 + 1 + 16 + 3 + 16;
const HEX_ID = /^[0-9a-fA-F]{1,16}$/;

/** A 64-bit id as Zipkin prints it; null when `text` is not 1 to 16 hexadecimal digits. */
function parseId(text: string): string | null {
  return HEX_ID.test(text) ? text.toLowerCase().padStart(16, '0') : null;
}

/** The B3 single header's sampling flag: `1` or `d` (debug) samples, `0` does not; null: not a flag. */
function samplingFlag(c: string | undefined): boolean | null {
  if (c === '1' || c === 'd') return true;
  return c === '0' ? false : null;
}

/**
 * Whether the request's headers ask for the trace to be sampled, else `traced` (the connection
 * manager's decision): the b3 header's flag where it has one, else x-b3-flags `1` (debug, which
 * B3 says implies sampling), else x-b3-sampled (`1`, or the old `true`).
 */
export function extractSampled(headers: readonly string[], traced: boolean): boolean {
  const b3 = firstHeaderValue(headers, 'b3');
  if (b3 !== undefined) {
    let at: number;
    switch (b3.length) {
      case 1:
        at = 0;
        break;
      // traceid-spanid-f, with a 64- or 128-bit trace id, then perhaps -parentid
      case 35:
      case 52:
        at = 34;
        break;
      case 51:
      case 68:
        at = 50;
        break;
      default:
        return traced;
    }
    return samplingFlag(b3[at]) ?? traced;
  }
  if (firstHeaderValue(headers, 'x-b3-flags') === '1') return true;
  const sampled = firstHeaderValue(headers, 'x-b3-sampled');
  if (sampled === undefined) return traced;
  return sampled === '1' || sampled === 'true';
}

/**
 * The span the headers name (the b3 header first, else x-b3-traceid and x-b3-spanid), with
 * `sampled` as the trace's decision; null when they name none, MALFORMED when they name one in
 * a form that cannot be read.
 */
export function extractSpanContext(headers: readonly string[], sampled: boolean): SpanContext | null | typeof MALFORMED {
  const b3 = firstHeaderValue(headers, 'b3');
  if (b3 !== undefined) return singleHeaderContext(b3, sampled);
  const traceId = firstHeaderValue(headers, 'x-b3-traceid');
  const spanId = firstHeaderValue(headers, 'x-b3-spanid');
  if (traceId === undefined || spanId === undefined) return null;
  let high: string | null = null;
  let low: string | null;
  if (traceId.length === 32) {
    high = parseId(traceId.slice(0, 16));
    low = parseId(traceId.slice(16));
    if (high === null) return MALFORMED;
  } else low = parseId(traceId);
  const span = parseId(spanId);
  if (low === null || span === null) return MALFORMED;
  const parentText = firstHeaderValue(headers, 'x-b3-parentspanid');
  let parent: string | null = null;
  if (parentText !== undefined && parentText !== '') {
    parent = parseId(parentText);
    if (parent === null) return MALFORMED;
  }
  return context(high, low, span, parent, sampled);
}

/** `{traceid}-{spanid}[-{sampled}[-{parentspanid}]]`, or a lone sampling flag (no span). */
function singleHeaderContext(b3: string, sampled: boolean): SpanContext | null | typeof MALFORMED {
  if (b3.length === 1) return samplingFlag(b3) === null ? MALFORMED : null;
  if (b3.length < 16 + 1 + 16 || b3.length > B3_MAX_LENGTH) return MALFORMED;
  let pos = 0;
  let high: string | null = null;
  if (b3[32] === '-') {
    high = parseId(b3.slice(0, 16));
    if (high === null) return MALFORMED;
    pos = 16;
  }
  const low = parseId(b3.slice(pos, pos + 16));
  pos += 16;
  if (low === null || b3[pos++] !== '-') return MALFORMED;
  const span = parseId(b3.slice(pos, pos + 16));
  pos += 16;
  if (span === null) return MALFORMED;
  let parent: string | null = null;
  if (b3.length > pos) {
    // -{sampled}, then perhaps -{parentspanid}
    if (b3.length === pos + 1 || b3[pos++] !== '-') return MALFORMED;
    if (!(b3.length === pos + 1 || b3[pos + 1] === '-') || samplingFlag(b3[pos]) === null) return MALFORMED;
    pos++;
    if (b3.length > pos) {
      if (b3.length !== pos + 17) return MALFORMED;
      parent = parseId(b3.slice(pos + 1));
      if (parent === null) return MALFORMED;
    }
  }
  return context(high, low, span, parent, sampled);
}

function context(high: string | null, traceId: string, spanId: string, parent: string | null, sampled: boolean): SpanContext {
  // As Envoy keeps them in integers: a zero high half is a 64-bit id, a zero parent none.
  return { traceIdHigh: high === ZERO_ID ? null : high, traceId, spanId, parentId: parent === ZERO_ID ? null : parent, sampled };
}

/** Names `span` in the headers sent upstream, replacing what the request brought. */
export function injectB3(headers: string[], span: SpanContext): void {
  setHeader(headers, 'x-b3-traceid', (span.traceIdHigh ?? '') + span.traceId);
  setHeader(headers, 'x-b3-spanid', span.spanId);
  if (span.parentId !== null) setHeader(headers, 'x-b3-parentspanid', span.parentId);
  setHeader(headers, 'x-b3-sampled', span.sampled ? '1' : '0');
}

/** A random 64-bit id from two 32-bit draws. */
export function randomId(random: () => number): string {
  return random().toString(16).padStart(8, '0') + random().toString(16).padStart(8, '0');
}
