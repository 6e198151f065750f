// The seam between the HTTP layer and the wire (Envoy's include/envoy/http/codec.h and the pool
// side of conn_pool.h). The router and the connection manager's streams speak in header maps
// (RequestHead, ResponseHead: pseudo-headers as fields, end-to-end headers as a list); each codec,
// HTTP/1 or HTTP/2, serializes them and frames bodies its own way.

import type { RequestHead, ResponseHead } from './message';
import type { HostStats } from '../stats/stats';
import type { DownstreamAddresses } from '../network/downstream_addresses';

/** Envoy's delayed_close_timeout: how long a connection the proxy closes waits for the client to read its last bytes. */
export const DELAYED_CLOSE_MS = 1000;

/**
 * Envoy 1.16's reset reasons as its local replies spell them; `overflow`: a circuit breaker
 * refused the stream; `remote reset` / `remote refused stream reset`: an HTTP/2 peer's
 * RST_STREAM. 1.16 has no reason of its own for a protocol error: the codec closes the
 * connection and its streams end as connection terminations.
 */
export type StreamResetReason =
  | 'connection failure'
  | 'connection termination'
  | 'local reset'
  | 'overflow'
  | 'remote reset'
  | 'remote refused stream reset';

/** The wire protocol of a stream, as protocol_selection USE_DOWNSTREAM_PROTOCOL reads it. */
export type HttpProtocol = 'http1' | 'http2';

/** The upstream request's side of a stream: what the codec tells it about the response. */
export interface ResponseDecoder {
  /** The response head; interim (1xx) responses are not delivered. */
  onUpstreamHead(head: ResponseHead): void;
  onUpstreamBody(chunk: Buffer): void;
  /** The response ended; `trailers` [name, value, ...] when it carried some, the receiver's to keep or change. */
  onUpstreamComplete(trailers: string[] | null): void;
  /** The response will not complete; nothing else will be called. */
  onUpstreamReset(reason: StreamResetReason): void;
  /** The request bytes over the buffer limit drained to half of it: the request may flow again. */
  onUpstreamDrained(): void;
  /** Called after each batch of upstream input: the writes it caused can now go out together. */
  onUpstreamReadEnd(): void;
}

/** One request going upstream, on an HTTP/1 connection or an HTTP/2 stream. */
export interface RequestEncoder {
  /** Queues the request head; `endStream` when the request has no body. */
  encodeHeaders(head: RequestHead, endStream: boolean): void;
  /** Sends or queues a body chunk; true when the write buffer is over its limit. */
  encodeData(chunk: Buffer, endStream: boolean): boolean;
  /** Ends the request with trailers, [name, value, ...]; a codec that cannot carry them ends it without. */
  encodeTrailers(trailers: readonly string[]): void;
  /** Sends what is queued; true when the write buffer is over its limit. */
  flush(): boolean;
  /** The request gives up on its response (timeout, downstream gone, retry). */
  resetStream(): void;
  /** Response backpressure: stop (true) or restart (false) reading the response. */
  readDisable(disable: boolean): void;
  /** `ip:port` of our side of the connection, as access logs print UPSTREAM_LOCAL_ADDRESS. */
  localAddress(): string;
}

/** What a request waiting for a pool's connection is told (Envoy's ConnectionPool::Callbacks). */
export interface PoolCallbacks {
  /** `encoder` carries the request; its responses go to the decoder given to newStream. */
  onPoolReady(encoder: RequestEncoder, hostStats: HostStats): void;
  onPoolFailure(reason: StreamResetReason): void;
}

/** Where the router gets the stream of one try: a host's connection pool, or a terminated CONNECT's own connection. */
export interface UpstreamStreamSource {
  readonly hostStats: HostStats;
  /**
   * Gives `callbacks` a stream now, or once a connection is ready (or failed). A connection opened
   * for it serves `downstream` (see ClusterInfo.downstreamSpecificConnections).
   */
  newStream(decoder: ResponseDecoder, callbacks: PoolCallbacks, downstream: DownstreamAddresses): void;
  /** Withdraws a request still waiting for a connection. */
  cancel(callbacks: PoolCallbacks): void;
}

/** A host's connection pool at one priority, HTTP/1 or HTTP/2 (Envoy's ConnectionPool::Instance). */
export interface ConnectionPool extends UpstreamStreamSource {
  readonly protocol: HttpProtocol;
  /** No connection, open or opening, and nobody waiting: the pool may be freed (max_connection_pools). */
  readonly idleForever: boolean;
  /** The host left the cluster: close idle connections now, busy ones when their streams end. */
  drain(): void;
  /** Fails waiting requests and closes every connection. */
  close(): void;
}

// ---- the server side ---------------------------------------------------------------------

/**
 * The connection manager's side of one request stream (Envoy's RequestDecoder and the stream's
 * StreamCallbacks): what the server codec tells it about the request.
 */
export interface RequestDecoder {
  /** @param endStream the request has no body: decodeComplete follows at once */
  decodeHeaders(head: RequestHead, endStream: boolean): void;
  decodeData(chunk: Buffer): void;
  /** The request ended; `trailers` [name, value, ...] when it carried some, the receiver's to keep or change. */
  decodeComplete(trailers: string[] | null): void;
  /** Called after each batch of downstream input: the writes it caused can now go out together. */
  onDecodeBatchEnd(): void;
  /**
   * The codec found the request malformed and can still answer: a complete local reply, after
   * which the connection closes (HTTP/1) or the stream ends (HTTP/2).
   * @param details what the codec found, as Envoy's response code details name it (`http1.codec_error`)
   */
  sendCodecErrorReply(status: number, body: string, details: string): void;
  /**
   * request_headers_timeout ran out before the request's head was whole (the HTTP/1 codec opens
   * a stream for the answer): Envoy's 408, after which the connection closes.
   */
  onRequestHeaderTimeout(): void;
  /**
   * The stream ended without a complete exchange: the peer reset it (`remote reset`), the
   * connection went (`connection termination`), or the codec refused it (`local reset`).
   * Nothing else is called after it.
   */
  onResetStream(reason: StreamResetReason): void;
  /** The response bytes over the write buffer's limit drained to half of it. */
  onBelowWriteBufferLowWatermark(): void;
}

/** One response going downstream (Envoy's ResponseEncoder). */
export interface ResponseEncoder {
  /** An interim `100 Continue`, for a request that expects one. */
  encode100Continue(): void;
  /**
   * @param head the response head as it is to be sent: end-to-end headers, framing facts
   *   (contentLength, bodyLength, transferCodings) the codec frames the body with
   * @param endStream the response has no body
   */
  encodeHeaders(head: ResponseHead, endStream: boolean): void;
  /** Sends or queues a body chunk; true when the write buffer is over its limit. */
  encodeData(chunk: Buffer): boolean;
  /** Ends the response, with trailers [name, value, ...] when there are some and the codec carries them. */
  encodeComplete(trailers: readonly string[] | null): void;
  /** Sends what is queued; true when the write buffer is over its limit. */
  flush(): boolean;
  /** Aborts the stream (HTTP/2 RST_STREAM; HTTP/1 closes the connection). */
  resetStream(): void;
  /** Request flow control: stops (true) or restarts (false) reading this stream's request. */
  readDisable(disable: boolean): void;
}

/** What a server codec tells the connection manager about the connection. */
export interface ServerConnectionCallbacks {
  /** A new request stream; the decoder returned hears about it. */
  newStream(encoder: ResponseEncoder): RequestDecoder;
  /** The peer sent what the protocol forbids; `details` names it. The codec closes the connection. */
  onProtocolError(details: string): void;
  /** The connection is closed; `local`: we closed it. Every stream was reset before. */
  onConnectionClosed(local: boolean): void;
}

/** The codec of one downstream connection (Envoy's ServerConnection). */
export interface ServerConnection {
  readonly protocol: HttpProtocol;
  /**
   * No new streams: HTTP/1 closes after the response under way, HTTP/2 sends GOAWAY and closes
   * when the streams in flight end. False when that began already.
   */
  shutdown(): boolean;
  /** Closes at once, as idle: HTTP/2 says GOAWAY first, HTTP/1 flushes and half-closes. */
  close(): void;
}
