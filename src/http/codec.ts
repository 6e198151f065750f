// The seam between the HTTP layer and the wire (Envoy's include/envoy/http/codec.h and the pool
// side of conn_pool.h). The router and the connection manager's streams speak in header maps
// (RequestHead, ResponseHead: pseudo-headers as fields, end-to-end headers as a list); each codec,
// HTTP/1 or HTTP/2, serializes them and frames bodies its own way.

import type { RequestHead, ResponseHead } from './message';
import type { HostStats } from '../stats/stats';
import type { DownstreamAddresses } from '../network/downstream_addresses';

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
  onUpstreamComplete(): void;
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
  /** Sends what is queued; true when the write buffer is over its limit. */
  flush(): boolean;
  /** The request gives up on its response (timeout, downstream gone, retry). */
  resetStream(): void;
  /** Response backpressure: stop (true) or restart (false) reading the response. */
  readDisable(disable: boolean): void;
}

/** What a request waiting for a pool's connection is told (Envoy's ConnectionPool::Callbacks). */
export interface PoolCallbacks {
  /** `encoder` carries the request; its responses go to the decoder given to newStream. */
  onPoolReady(encoder: RequestEncoder, hostStats: HostStats): void;
  onPoolFailure(reason: StreamResetReason): void;
}

/** A host's connection pool at one priority, HTTP/1 or HTTP/2 (Envoy's ConnectionPool::Instance). */
export interface ConnectionPool {
  readonly hostStats: HostStats;
  readonly protocol: HttpProtocol;
  /**
   * Gives `callbacks` a stream now, or once a connection is ready (or failed). A connection opened
   * for it serves `downstream` (see ClusterInfo.downstreamSpecificConnections).
   */
  newStream(decoder: ResponseDecoder, callbacks: PoolCallbacks, downstream: DownstreamAddresses): void;
  /** Withdraws a request still waiting for a connection. */
  cancel(callbacks: PoolCallbacks): void;
  /** No connection, open or opening, and nobody waiting: the pool may be freed (max_connection_pools). */
  readonly idleForever: boolean;
  /** The host left the cluster: close idle connections now, busy ones when their streams end. */
  drain(): void;
  /** Fails waiting requests and closes every connection. */
  close(): void;
}
