// The HTTP filters the connection manager runs before the router (Envoy's
// include/envoy/http/filter.h, cut down to what the filters of this build use). Decoder filters
// see the request in configuration order; each one lets it go on or answers it itself. Encoder
// filters see each response head in the reverse order, local replies included, and may add
// headers to it.
//
// A filter serves one downstream connection, one request at a time, like the router: its
// per-request state is reset by decodeHeaders instead of allocating a filter per request.

import type { Route, VirtualHost } from '../../config/model';
import type { RequestHead } from '../../http/message';
import type { StreamInfo } from '../../stream_info/stream_info';

export const enum FilterHeadersStatus {
  /** The next filter (in the end the router) gets the request. */
  Continue,
  /**
   * The filter answers this request itself (callbacks.sendLocalReply, now or once the request
   * is complete): the rest of the request goes to it alone, and no later filter sees it.
   */
  StopIteration,
}

/** The route a request takes and its virtual host, as a filter reads their settings (Envoy's route()). */
export interface RouteEntry {
  readonly route: Route;
  readonly virtualHost: VirtualHost;
}

/** What a filter may do to the stream it serves. */
export interface HttpFilterCallbacks {
  /** The current request's route, chosen once for the filters and the router; null when none matches. */
  route(): RouteEntry | null;
  /** Answers the request with a complete response of our own (text/plain when `body` is set). */
  sendLocalReply(status: number, body: string, extraHeaders?: readonly string[], details?: string): void;
  /** What access logs will read of this stream; null when the connection manager has none. */
  readonly info: StreamInfo | null;
}

/** Headers a filter sets on the response about to be written. */
export interface ResponseHeaderSink {
  /** Adds `name`, in place of any header of that name the upstream sent. */
  set(name: string, value: string): void;
}

export interface HttpFilter {
  /** @param endStream the request has no body: the filter will see no decodeData, only decodeComplete */
  decodeHeaders(head: RequestHead, endStream: boolean): FilterHeadersStatus;
  /** A body chunk of a request this filter stopped. */
  decodeData(chunk: Buffer): void;
  /** The end of a request this filter stopped. */
  decodeComplete(): void;
  /**
   * The head of the response to the current request, from upstream or a local reply.
   * @param headers the upstream response's end-to-end headers, [name, value, ...]; empty for a local reply
   */
  encodeHeaders(status: number, headers: readonly string[], out: ResponseHeaderSink): void;
}

/** One configured filter, shared by the connections of a connection manager. */
export interface HttpFilterFactory {
  createFilter(callbacks: HttpFilterCallbacks): HttpFilter;
}
