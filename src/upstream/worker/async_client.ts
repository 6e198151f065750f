// Requests of the proxy's own to a cluster (Envoy's Http::AsyncClient): a complete request
// (head, body, trailers) goes to a host the cluster's balancer picks, over that host's
// connection pool, and the whole response comes back to a callback. Envoy runs the request
// through a router: what would make the router answer itself (no host, a failed connection or a
// reset before the response, the timeout) comes back as that local reply (503, 504; to a gRPC
// request, the gRPC status the router gives it: 200 with grpc-status 14); a reset
// once the response has started is a failure. The cluster's statistics and its hosts' outlier
// detection count the request as the router counts one.

import type { Clock, TimeoutHandle } from '../../common/clock';
import type { ConnectionPool, PoolCallbacks, RequestEncoder, ResponseDecoder, StreamResetReason } from '../../http/codec';
import { encodeGrpcMessage, httpToGrpcStatus, isGrpc } from '../../http/grpc';
import { appendHeaderValue, type RequestHead, ResponseHead, setHeader } from '../../http/message';
import { OVERLOADED_HEADER } from '../../http/overloaded_header';
import { NO_HEALTHY_UPSTREAM, UPSTREAM_REQUEST_TIMEOUT, UPSTREAM_RESET_PREFIX } from '../../http/upstream_failure_text';
import type { DownstreamAddresses } from '../../network/downstream_addresses';
import type { HostStats } from '../../stats/stats';
import type { Cluster } from './cluster';
import type { Host } from './host';
import { isCanaryResponse } from '../shared/canary';
import { connectionContext } from './lb/load_balancer';
import { OutlierResult } from './outlier/host_monitor';

/** A response, the upstream's or the local reply standing for it. */
export interface AsyncResponse {
  readonly head: ResponseHead;
  /** Empty unless the request kept it (AsyncRequestOptions.keepResponseBody). */
  readonly body: Buffer;
  /** [name, value, ...] when the response ended with some. */
  readonly trailers: readonly string[] | null;
}

/** Envoy's FailureReason: the stream was reset after its response began. */
export type AsyncFailureReason = 'reset';

export interface AsyncRequestCallbacks {
  onSuccess(response: AsyncResponse): void;
  onFailure(reason: AsyncFailureReason): void;
}

export interface AsyncRequestOptions {
  /** From the send; 0: none. */
  readonly timeoutMs: number;
  /**
   * The response body is kept for onSuccess, up to the cluster's per_connection_buffer_limit_bytes
   * (more resets the stream: a failure); false reads it and drops it.
   */
  readonly keepResponseBody: boolean;
  /** The downstream connection the request is made for, where the cluster keeps connections per downstream; default none. */
  readonly downstream?: DownstreamAddresses;
}

/** A request under way. */
export interface AsyncRequest {
  /** Gives the request up: no callback follows. */
  cancel(): void;
}

export interface AsyncClientDeps {
  readonly clock: Clock;
  /** The server's local address, which Envoy's async client appends to x-forwarded-for; undefined: none. */
  readonly localAddress: string | undefined;
}

/** Envoy's async client marks what it sends as internal (x-envoy-internal). */
const INTERNAL_HEADER = 'x-proxy-internal';
const NO_HEADERS: readonly string[] = [];
const EMPTY = Buffer.alloc(0);
/** A request made for no downstream connection. */
const NO_DOWNSTREAM: DownstreamAddresses = {};

export class AsyncClient {
  constructor(private readonly deps: AsyncClientDeps) {}

  /**
   * Sends `head` (marked internal and with our address in x-forwarded-for, in place), `body` and
   * `trailers` to `cluster`. The callbacks may run before this returns (no host to send to, say),
   * and then it returns null, as Envoy's does; otherwise the request, which may be cancelled.
   */
  send(
    cluster: Cluster,
    head: RequestHead,
    body: readonly Buffer[],
    trailers: readonly string[] | null,
    callbacks: AsyncRequestCallbacks,
    options: AsyncRequestOptions,
  ): AsyncRequest | null {
    setHeader(head.headers, INTERNAL_HEADER, 'true');
    if (this.deps.localAddress !== undefined) appendHeaderValue(head.headers, 'x-forwarded-for', this.deps.localAddress);
    const counters = cluster.info.stats;
    const downstream = options.downstream ?? NO_DOWNSTREAM;
    const host = cluster.chooseHost(connectionContext(null, head));
    // No downstream protocol: HTTP/1.1 unless the cluster speaks HTTP/2.
    const pool = host === null ? null : cluster.httpPool(host, downstream, 'DEFAULT', 'http1', head.authority);
    if (host === null || pool === null) {
      counters.counters.upstream_cx_none_healthy.inc();
      counters.chargeResponseCode(503, true);
      callbacks.onSuccess(localReply(head, 503, NO_HEALTHY_UPSTREAM, NO_HEADERS));
      return null;
    }
    const request = new OutgoingRequest(cluster, host, pool, head, body, trailers, callbacks, options, this.deps.clock);
    request.start(downstream);
    return request.done ? null : request;
  }
}

/** What the router would answer itself: to a gRPC request, a trailers-only gRPC status. */
function localReply(request: RequestHead, status: number, text: string, headers: readonly string[]): AsyncResponse {
  if (isGrpc(request)) {
    const head = new ResponseHead(200, false);
    head.contentLength = head.bodyLength = 0;
    head.headers.push('content-type', 'application/grpc', 'grpc-status', String(httpToGrpcStatus(status)), 'grpc-message', encodeGrpcMessage(text), ...headers);
    return { head, body: EMPTY, trailers: null };
  }
  const head = new ResponseHead(status, false);
  const body = Buffer.from(text);
  head.contentLength = head.bodyLength = body.length;
  head.headers.push('content-type', 'text/plain', ...headers);
  return { head, body, trailers: null };
}

class OutgoingRequest implements PoolCallbacks, ResponseDecoder, AsyncRequest {
  done = false;
  private encoder: RequestEncoder | null = null;
  private hostStats: HostStats | null = null;
  private timer: TimeoutHandle | null = null;
  private readonly startedAt: number;
  private response: ResponseHead | null = null;
  /** The response came from a canary: its timing is charged under `canary.` too. */
  private canary = false;
  private chunks: Buffer[] | null = null;
  private bodyBytes = 0;

  constructor(
    private readonly cluster: Cluster,
    private readonly host: Host,
    private readonly pool: ConnectionPool,
    private readonly head: RequestHead,
    private readonly body: readonly Buffer[],
    private readonly trailers: readonly string[] | null,
    private readonly callbacks: AsyncRequestCallbacks,
    private readonly options: AsyncRequestOptions,
    private readonly clock: Clock,
  ) {
    this.startedAt = clock.eventNow();
  }

  start(downstream: DownstreamAddresses): void {
    if (this.options.timeoutMs > 0) this.timer = this.clock.setTimeout(this.onTimeout, this.options.timeoutMs);
    this.pool.newStream(this, this, downstream);
  }

  cancel(): void {
    if (this.done) return;
    this.abort();
    this.end();
  }

  onPoolReady(encoder: RequestEncoder, hostStats: HostStats): void {
    this.encoder = encoder;
    this.hostStats = hostStats;
    this.host.outlier.putResult(OutlierResult.LocalOriginConnectSuccess);
    const { body, trailers } = this;
    encoder.encodeHeaders(this.head, body.length === 0 && trailers === null);
    for (let i = 0; i < body.length; i++) encoder.encodeData(body[i]!, trailers === null && i === body.length - 1);
    if (trailers !== null) encoder.encodeTrailers(trailers);
    encoder.flush();
  }

  onPoolFailure(reason: StreamResetReason): void {
    this.pool.hostStats.rq_error.inc();
    // A request the circuit breakers refused never reached the host.
    if (reason !== 'overflow') this.host.outlier.putResult(OutlierResult.LocalOriginConnectFailed);
    this.replyLocally(503, UPSTREAM_RESET_PREFIX + reason, reason === 'overflow' ? OVERLOADED_HEADER : NO_HEADERS);
  }

  onUpstreamHead(head: ResponseHead): void {
    this.response = head;
    this.host.outlier.putHttpResponseCode(head.status);
    this.canary = isCanaryResponse(this.host, head.headers);
    this.cluster.info.stats.chargeResponseCode(head.status, true, this.canary);
    if (head.status >= 500) this.hostStats!.rq_error.inc();
    else this.hostStats!.rq_success.inc();
  }

  onUpstreamBody(chunk: Buffer): void {
    if (!this.options.keepResponseBody || this.done) return;
    this.bodyBytes += chunk.length;
    if (this.bodyBytes > this.cluster.info.perConnectionBufferLimitBytes) {
      // A response too big to hold: given up, as a reset.
      this.abort();
      this.fail();
      return;
    }
    (this.chunks ??= []).push(chunk);
  }

  onUpstreamComplete(trailers: readonly string[] | null): void {
    if (this.done) return;
    this.cluster.info.stats.recordRequestTime(this.clock.eventNow() - this.startedAt, true, this.canary);
    const body = this.chunks === null ? EMPTY : this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const response = { head: this.response!, body, trailers };
    this.end();
    this.callbacks.onSuccess(response);
  }

  onUpstreamReset(reason: StreamResetReason): void {
    if (this.done) return;
    this.host.outlier.putResult(OutlierResult.LocalOriginConnectFailed);
    if (this.response !== null) {
      this.fail();
      return;
    }
    this.hostStats!.rq_error.inc();
    this.replyLocally(503, UPSTREAM_RESET_PREFIX + reason, NO_HEADERS);
  }

  onUpstreamDrained(): void {}

  onUpstreamReadEnd(): void {}

  private readonly onTimeout = (): void => {
    this.timer = null;
    if (this.done) return;
    this.cluster.info.stats.counters.upstream_rq_timeout.inc();
    this.hostStats?.rq_timeout.inc();
    this.host.outlier.putResult(OutlierResult.LocalOriginTimeout);
    this.abort();
    // The router answers 504 unless the response had begun.
    if (this.response !== null) this.fail();
    else this.replyLocally(504, UPSTREAM_REQUEST_TIMEOUT, NO_HEADERS);
  };

  private abort(): void {
    if (this.encoder !== null) this.encoder.resetStream();
    else this.pool.cancel(this);
  }

  private replyLocally(status: number, text: string, headers: readonly string[]): void {
    if (this.done) return;
    this.cluster.info.stats.chargeResponseCode(status, true, this.host.canary);
    this.end();
    this.callbacks.onSuccess(localReply(this.head, status, text, headers));
  }

  private fail(): void {
    if (this.done) return;
    this.end();
    this.callbacks.onFailure('reset');
  }

  private end(): void {
    this.done = true;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.encoder = null;
    this.chunks = null;
  }
}
