// What a format operator reads: the stream's heads as they were sent and received, and its
// StreamInfo. A TCP connection has no heads.

import type { RequestHead, ResponseHead } from '../http/message';
import type { StreamInfo } from '../stream_info/stream_info';
import type { JsonValue } from '../config/json';

export interface FormatContext {
  readonly request: RequestHead | null;
  readonly response: ResponseHead | null;
  /** [name, value, ...], names in lower case. */
  readonly trailers: readonly string[] | null;
  readonly info: StreamInfo;
}

/** One piece of a format: literal text or a command operator (Envoy's FormatterProvider). */
export interface FormatterProvider {
  /** The text; null when the value is unset (printed `-`, or nothing with omit_empty_values). */
  text(context: FormatContext): string | null;
  /** The typed value for typed JSON: a number stays a number; null when unset. */
  value(context: FormatContext): JsonValue;
  /** Literal text's own text: joined as it is, no call made. */
  readonly literal?: string;
}
