// The HTTP filters the connection manager runs before the router (Envoy's
// include/envoy/http/filter.h, in this codebase's frames: a head, body chunks, and an end that
// may carry trailers). Decoder callbacks see the request in configuration order, encoder
// callbacks the response in the reverse order, local replies included. A filter may stop a frame
// (answer the request itself, hold the request while it asks a service, buffer a body) and
// continue later; what it lets go on reaches the next filter, in the end the router or the codec.
//
// A filter serves one downstream connection, one request at a time, like the router: its
// per-request state is reset by decodeHeaders instead of allocating a filter per request, and
// onStreamEnd tells it to drop what it still has pending.

import type { Route, RouteConfiguration, VirtualHost, WeightedCluster } from '../../config/model';
import type { HttpProtocol } from '../../http/codec';
import { firstHeaderValue, type RequestHead, type ResponseHead } from '../../http/message';
import type { TrustedClient } from '../../http/trusted_client';
import type { DownstreamConnectionInfo, StreamInfo } from '../../stream_info/stream_info';

export const enum FilterHeadersStatus {
  /** The next filter (in the end the router, or the codec) gets the head. */
  Continue,
  /**
   * The head goes no further for now: the filter answers the request itself
   * (callbacks.sendLocalReply, now or later), or lets it go on later (continueDecoding /
   * continueEncoding). It still sees the body and the end; the next filters get them after the head.
   */
  StopIteration,
}

export const enum FilterDataStatus {
  /** The chunk goes on; a filter whose head was stopped lets the head, what it held and this chunk go on. */
  Continue,
  /** The chunk is held with the rest this filter holds, until it continues (callbacks.decodingBuffer / encodingBuffer). */
  StopIterationAndBuffer,
  /** The chunk is the filter's (it may pass something else on with injectDecodedData / injectEncodedData). */
  StopIterationNoBuffer,
}

/** For the end of a message: Continue lets it (and what this filter held) go on; StopIteration holds it until the filter continues. */
export type FilterEndStatus = FilterHeadersStatus;

/** The route a request takes and its virtual host, as a filter reads their settings (Envoy's route()). */
export interface RouteEntry {
  readonly route: Route;
  readonly virtualHost: VirtualHost;
  /** The entry of the route's weighted_clusters this request goes to, drawn with the route; null when it has none. */
  readonly weightedCluster: WeightedCluster | null;
}

/** The upstream cluster the request is routed to (Envoy's routeEntry()->clusterName()); '' for none (a direct response, no such header). */
export function routeClusterName(entry: RouteEntry, head: RequestHead): string {
  const action = entry.route.action;
  if (action.kind !== 'route') return '';
  if (entry.weightedCluster !== null) return entry.weightedCluster.name;
  if (action.clusterHeader !== undefined) return firstHeaderValue(head.headers, action.clusterHeader) ?? '';
  return action.cluster;
}

/** What a filter may tell of the downstream stream it serves, whether or not a StreamInfo records it. */
export interface DownstreamFacts {
  /** The downstream connection's addresses and TLS session. */
  connectionInfo(): DownstreamConnectionInfo;
  /** When the stream began, in ms since the epoch. */
  startTime(): number;
  readonly protocol: HttpProtocol;
  /** The stream's id, as log lines print it (`[S<id>]`). */
  readonly streamId: number;
}

/** What a filter may do to the stream it serves. */
export interface HttpFilterCallbacks {
  /** The current request's route, chosen once for the filters and the router; null when none matches. */
  route(): RouteEntry | null;
  /** The route is drawn again from the request's head when next asked for (a filter changed what it matches on). */
  clearRouteCache(): void;
  readonly downstream: DownstreamFacts;
  /**
   * Answers the request with a complete response of our own (text/plain when `body` is set: text
   * as UTF-8, a Buffer as its bytes; to a gRPC request, status 200 with `grpcStatus`, or the HTTP
   * status's gRPC equivalent, and the body as grpc-message).
   * @param modifyHeaders changes the reply's headers, [name, value, ...], in place before it goes out
   */
  sendLocalReply(
    status: number,
    body: string | Buffer,
    extraHeaders?: readonly string[],
    details?: string,
    grpcStatus?: number,
    modifyHeaders?: (headers: string[]) => void,
  ): void;
  /** What access logs will read of this stream; null when the connection manager has none. */
  readonly info: StreamInfo | null;
  /** Who sent the request as the connection manager trusts it, and whether it is internal. */
  trustedClient(): TrustedClient;
  /** Lets the request this filter stopped go on: its head, the body it held and its end, as far as they came. */
  continueDecoding(): void;
  /** Lets the response this filter stopped go on. */
  continueEncoding(): void;
  /** The request body this filter holds (StopIterationAndBuffer), as one buffer. */
  decodingBuffer(): Buffer;
  /** The response body this filter holds. */
  encodingBuffer(): Buffer;
  /** Sends `chunk` on as request body, from this filter to the next, whether or not this filter holds the request. */
  injectDecodedData(chunk: Buffer): void;
  /** Sends `chunk` on as response body, from this filter to the next. */
  injectEncodedData(chunk: Buffer): void;
  /** The filter holds more response body than it should: the upstream's response stops being read until it says it drained. */
  onEncoderFilterAboveWriteBufferHighWatermark(): void;
  /** What the filter held of the response drained: reading the upstream's response may resume. */
  onEncoderFilterBelowWriteBufferLowWatermark(): void;
  /**
   * How much request body this stream's filters may hold before it is answered 413 (the
   * listener's per_connection_buffer_limit_bytes until a filter sets its own, as the buffer filter's max_request_bytes).
   */
  setDecoderBufferLimit(bytes: number): void;
}

/**
 * One filter of the chain. A callback it does not have lets its frame go on (Continue). Heads are
 * its own to change: `head.headers` of a request before the router reads it, of a response
 * before the connection manager adds date, server and via.
 */
export interface HttpFilter {
  /** @param endStream the request has no body: the filter sees no decodeData and no decodeComplete */
  decodeHeaders(head: RequestHead, endStream: boolean): FilterHeadersStatus;
  decodeData?(chunk: Buffer): FilterDataStatus;
  /** The end of a request that had a body or trailers. @param trailers [name, value, ...], changeable; null when none */
  decodeComplete?(trailers: string[] | null): FilterEndStatus;
  /** @param endStream the response has no body: no encodeData nor encodeComplete follows */
  encodeHeaders?(head: ResponseHead, endStream: boolean): FilterHeadersStatus;
  encodeData?(chunk: Buffer): FilterDataStatus;
  /** The end of a response that had a body or trailers; a filter may inject a last chunk before it goes on. */
  encodeComplete?(trailers: string[] | null): FilterEndStatus;
  /** The stream ended (answered, reset or recreated): whatever the filter still has pending (timers, calls) is dropped. */
  onStreamEnd?(): void;
}

/** One configured filter, shared by the connections of a connection manager. */
export interface HttpFilterFactory {
  createFilter(callbacks: HttpFilterCallbacks): HttpFilter;
  /**
   * Its filter may make a request gRPC that was not (grpc_web): the stream then decides whether a
   * local reply is gRPC's from the request as it came, as Envoy does.
   */
  readonly makesGrpcRequests?: boolean;
  /**
   * For a filter that prepares the typed_per_filter_config entries of its connection manager's
   * routes: those of a route configuration RDS brought, which requests are routed by from now on
   * (those routed by the previous one keep finding theirs).
   */
  prepareRoutes?(routeConfig: RouteConfiguration): void;
}
