// One request and its response on a downstream connection, whatever its protocol (Envoy's
// ConnectionManagerImpl::ActiveStream): runs the HTTP filters and the router, the stream's
// timers, its local replies and its statistics, and adds the response headers the connection
// manager owns (date, server, x-proxy-upstream-service-time) before the codec writes them.
//
// An ActiveStream, with its filters and router, serves request after request, HTTP/1 requests or
// HTTP/2 streams of any connection of its factory that speaks its protocol: its per-request
// state is reset by begin() instead of allocating one per request. Between requests it waits in
// its factory's pool, not on a connection, so an idle keep-alive connection holds none.

import { randomUUID } from 'node:crypto';
import type { HttpProtocol, RequestDecoder, ResponseEncoder, StreamResetReason } from '../../../http/codec';
import { encodeGrpcMessage, httpToGrpcStatus, isGrpc } from '../../../http/grpc';
import { OVERLOADED_HEADER } from '../../../http/overloaded_header';
import type { OverloadState } from '../../../overload/overload_state';
import { appendHeaderValue, removeHeaders, type RequestHead, ResponseHead, setHeader, upgradeTypeOf } from '../../../http/message';
import { headerValue } from '../../http/header_matcher';
import { mergeSlashes, normalizePath } from '../../../http/path_normalization';
import type { HttpConnectionManagerConfig } from '../../../config/model';
import { forwardedForOf, isEdgeDroppedHeader, trustedClient, type TrustedClient } from '../../../http/trusted_client';
import { headerDump } from '../../../log/connection_log';
import type { Logger } from '../../../log/logger_api';
import type { RouteEntry } from '../../http/http_filter';
import type { InternalRedirectHistory } from '../../http/internal_redirect';
import { type DownstreamStream, type HeaderModifier, Router } from '../../http/router';
import type { DownstreamAddresses } from '../../../network/downstream_addresses';
import type { ConnectionManager } from './connection_manager';
import type { HttpConnectionManagerFactory } from './factory';
import { type FilteredStream, FilterManager } from './filter_manager';
import type { HttpConnectionManagerStats } from './stats';
import { ResponseFlag } from '../../../stream_info/response_flags';
import { type DownstreamConnectionInfo, StreamInfo } from '../../../stream_info/stream_info';
import { StreamTimers, type TimedStream } from './stream_timers';
import type { TracedRequest } from '../../../tracing/traced_request';

const NO_HEADERS: readonly string[] = [];
/** A local reply without data; zero bytes, so nothing can change it. */
const NO_DATA = Buffer.alloc(0);

/** A pooled stream's connection, between connections: no address known. */
const NO_CONNECTION: DownstreamAddresses = {};
const NO_CONNECTION_INFO: DownstreamConnectionInfo = { id: 0, localAddress: '', directRemoteAddress: '', requestedServerName: null, ssl: null };

/** The `http` logger taken for this file's lines: once per factory, never per stream. */
export function activeStreamLog(http: Logger): Logger {
  return http.forFile(__filename);
}

export class ActiveStream implements RequestDecoder, DownstreamStream, FilteredStream, TimedStream {
  readonly protocol: HttpProtocol;
  /** The worker's overload actions, read once per request. */
  private readonly overload: OverloadState;
  // The connection's, set whenever a pooled stream is attached to one; none while it waits in the pool.
  remoteAddress = '';
  connection: DownstreamAddresses = NO_CONNECTION;
  connectionId = 0;
  private owner: ConnectionManager | null = null;
  private readonly factory: HttpConnectionManagerFactory;
  /** Its number in log lines. */
  streamId = 0;
  private readonly stats: HttpConnectionManagerStats;
  private readonly router: Router;
  /** The filters before the router; null when there are none (the fast path). */
  private readonly chain: FilterManager | null;
  private readonly timers: StreamTimers;
  /** What the access logs read; null when the connection manager has none (nothing is recorded). */
  readonly info: StreamInfo | null;
  /** The response head as sent and its trailers, for the access logs. */
  private response: ResponseHead | null = null;
  private trailers: readonly string[] | null = null;
  /** The upstream response's server header, which the manager may keep; null for a local reply or none. */
  private upstreamServer: string | null = null;
  /** The codec's write buffer went over its limit on the last body chunk written. */
  private writeOver = false;
  /** Filters holding more of the response than they should: the upstream's response waits. */
  private filterBackups = 0;
  private encoder: ResponseEncoder | null = null;
  private active = false;
  private request: RequestHead | null = null;
  /** The request was gRPC as received; read only when a filter may make one (chain.makesGrpcRequests). */
  private grpcRequest = false;
  private responseStarted = false;
  /** A response without a body, held until the router says it is complete. */
  private headersOnly: ResponseHead | null = null;
  /** The request's upgrade was allowed: its stream counts in downstream_cx_upgrades_active. */
  private upgraded = false;
  private startMs = 0;
  /** The downstream request's trusted client, once asked for; null until then. */
  private client: TrustedClient | null = null;
  /** The internal redirects of the downstream request this stream serves; null before its first. */
  redirectHistory: InternalRedirectHistory | null = null;
  /** The request's span; null when the connection manager does not trace. */
  private span: TracedRequest | null = null;

  /** Serves one request after another, of any connection of `owner`'s factory that speaks its protocol. */
  constructor(owner: ConnectionManager) {
    const factory = owner.factory;
    this.factory = factory;
    this.protocol = owner.codec.protocol;
    this.overload = factory.deps.overload;
    this.stats = factory.stats;
    this.router = new Router(factory.router, this);
    this.chain = factory.filters === null ? null : new FilterManager(factory.filters, this, factory.router.bufferLimitBytes);
    this.timers = new StreamTimers(factory.streamTimers, factory.clock, this.stats, this);
    this.info = factory.recordsStreams ? new StreamInfo(owner.connectionInfo(), factory.clock) : null;
    this.attach(owner);
  }

  /** The connection whose next request this stream serves: a pooled stream's changes as it is taken. */
  attach(owner: ConnectionManager): void {
    this.owner = owner;
    this.remoteAddress = owner.remoteAddress;
    this.connection = owner.socket;
    this.connectionId = owner.connectionId;
    if (this.info !== null) this.info.connection = owner.connectionInfo();
  }

  /** Back in the pool: nothing of the connection is kept, which may close meanwhile. */
  detach(): void {
    this.owner = null;
    this.remoteAddress = '';
    this.connection = NO_CONNECTION;
    this.connectionId = 0;
    if (this.info !== null) this.info.connection = NO_CONNECTION_INFO;
  }

  /** A new stream begins on this object, answered through `encoder`. */
  begin(encoder: ResponseEncoder): void {
    this.redirectHistory = null;
    this.client = null;
    this.start(encoder);
  }

  /** The stream's counts, ids and state, for a request from the codec or one the manager recreates. */
  private start(encoder: ResponseEncoder): void {
    const stats = this.stats;
    stats.downstream_rq_total.inc();
    if (this.protocol === 'http1') stats.downstream_rq_http1_total.inc();
    else stats.downstream_rq_http2_total.inc();
    stats.downstream_rq_active.inc();
    this.startMs = this.factory.clock.eventNow();
    this.streamId = this.factory.deps.ids.nextStream();
    this.encoder = encoder;
    this.active = true;
    this.request = null;
    this.responseStarted = false;
    this.headersOnly = null;
    this.upstreamServer = null;
    this.filterBackups = 0;
    this.chain?.reset();
    this.info?.start();
  }

  // ---- RequestDecoder: the request ----------------------------------------------------------

  decodeHeaders(head: RequestHead, endStream: boolean): void {
    this.request = head;
    if (this.chain !== null && this.chain.makesGrpcRequests) this.grpcRequest = isGrpc(head);
    const info = this.info;
    if (info !== null) {
      info.protocol = this.protocol === 'http2' ? 'HTTP/2' : head.http10 ? 'HTTP/1.0' : 'HTTP/1.1';
      if (endStream) info.lastDownstreamRxByteReceived = info.sinceStart();
    }
    const log = this.factory.streamLog;
    if (log.enabled('debug')) {
      log.debug(`[C${this.connectionId}] new stream`);
      const pseudo = [':authority', head.authority, ':path', head.path, ':method', head.method];
      if (this.protocol === 'http2') pseudo.push(':scheme', head.scheme);
      log.debug(`${this.tag()}request headers complete (end_stream=${endStream}):\n${headerDump(pseudo)}${headerDump(head.headers)}`);
    }
    this.timers.start(endStream);
    if (this.overload.stopAcceptingRequests) {
      // Before anything else is made for the request: under memory pressure, the cheapest answer.
      this.stats.downstream_rq_overload_close.inc();
      this.sendLocalReply(503, 'proxy overloaded', OVERLOADED_HEADER, 'overload');
      return;
    }
    if (head.authority === '') {
      this.sendLocalReply(400, '', NO_HEADERS, 'missing_host_header');
      return;
    }
    const config = this.factory.config;
    // A CONNECT has no path to normalize.
    if (head.path !== '') {
      if (config.normalizePath) head.path = normalizePath(head.path);
      if (config.mergeSlashes) head.path = mergeSlashes(head.path);
    }
    if (info !== null) info.trustedClient = this.trustedClient();
    // Envoy sanitizes a request once: a recreated stream keeps what its first pass set.
    if (this.redirectHistory === null) {
      // What only a proxy inside may say of a request; an edge request's own say is dropped, before add_user_agent speaks.
      if (config.useRemoteAddress && this.trustedClient().edge) removeHeaders(head.headers, isEdgeDroppedHeader);
      // As Envoy's connection manager, the request id is made before the filters and the router,
      // so every log entry, local replies included, names it; the router sends this one upstream.
      if (config.generateRequestId) this.setRequestId(head, config);
      if (config.addUserAgent) this.addUserAgent(head);
    }
    // Tracing: the sanitized, routed head decides the trace and carries the span's context upstream.
    const tracing = this.factory.tracing;
    if (tracing !== null) this.span = tracing.startSpan(head, this, this.redirectHistory === null);
    const upgrade = upgradeTypeOf(head);
    if (upgrade !== null) {
      if (!this.router.allowsUpgrade(head, upgrade)) {
        this.stats.downstream_rq_ws_on_non_ws_route.inc();
        this.sendLocalReply(403, '', NO_HEADERS, 'upgrade_failed');
        return;
      }
      this.upgraded = true;
      this.stats.downstream_cx_upgrades_total.inc();
      this.stats.downstream_cx_upgrades_active.inc();
    }
    if (head.expectContinue) {
      this.encoder!.encode100Continue();
      this.stats.chargeResponseCode(100);
    }
    if (endStream) this.timers.requestComplete();
    if (this.chain !== null) this.chain.decodeHeaders(head, endStream);
    else this.forwardHeaders(head, endStream);
  }

  decodeData(chunk: Buffer): void {
    if (!this.active) return;
    this.timers.touch();
    if (this.info !== null) this.info.bytesReceived += chunk.length;
    if (this.chain !== null) this.chain.decodeData(chunk);
    else this.router.decodeData(chunk);
  }

  decodeComplete(trailers: string[] | null): void {
    if (!this.active) return;
    this.timers.requestComplete();
    if (this.info !== null) this.info.lastDownstreamRxByteReceived = this.info.sinceStart();
    if (this.chain !== null) this.chain.decodeEnd(trailers);
    else this.router.decodeComplete(trailers);
  }

  // ---- FilteredStream: the request past the filters, to the router ----------------------------

  forwardHeaders(head: RequestHead, endStream: boolean): void {
    this.router.decodeHeaders(head);
    if (endStream && this.active) this.router.decodeComplete(null);
  }

  forwardData(chunk: Buffer): void {
    this.router.decodeData(chunk);
  }

  forwardEnd(trailers: string[] | null): void {
    this.router.decodeComplete(trailers);
  }

  onDecodingResumed(): void {
    if (this.active) this.router.onDownstreamReadEnd();
  }

  onEncodingResumed(): void {
    if (this.active) this.encoder!.flush();
  }

  onEncoderFilterWatermark(above: boolean): void {
    if (above) this.filterBackups++;
    else if (this.filterBackups > 0 && --this.filterBackups === 0 && this.active) this.router.onDownstreamDrained();
  }

  /** Envoy's 413 (downstream_rq_too_large) and 500 (rs_too_large) for a body the filters cannot hold. */
  onBufferOverflow(decoding: boolean): void {
    if (decoding) this.stats.downstream_rq_too_large.inc();
    else this.stats.rs_too_large.inc();
    if (this.responseStarted) this.resetStream();
    else if (decoding) this.sendLocalReply(413, 'Payload Too Large', NO_HEADERS, 'request_payload_too_large');
    else this.sendLocalReply(500, 'Internal Server Error', NO_HEADERS, 'response_payload_too_large');
  }

  onDecodeBatchEnd(): void {
    if (this.active) this.router.onDownstreamReadEnd();
  }

  onResetStream(reason: StreamResetReason): void {
    if (!this.active) return;
    if (reason === 'connection termination') this.owner!.streamCutShort();
    // Envoy's DC: the client went away (or reset the stream) before the response ended.
    if (reason !== 'local reset') this.info?.setResponseFlag(ResponseFlag.DownstreamConnectionTermination);
    this.stats.downstream_rq_rx_reset.inc();
    this.router.onDownstreamReset();
    this.finish();
  }

  onBelowWriteBufferLowWatermark(): void {
    if (!this.active) return;
    // The client reading the response is progress, as node's own stream timeout counted it.
    this.timers.touch();
    this.router.onDownstreamDrained();
  }

  // ---- DownstreamStream: the response -------------------------------------------------------

  /** Envoy's onRequestHeaderTimeout: no response flag, details request_header_timeout. */
  onRequestHeaderTimeout(): void {
    this.stats.downstream_rq_header_timeout.inc();
    this.sendLocalReply(408, 'request header timeout', NO_HEADERS, 'request_header_timeout');
  }

  /** Envoy's DPE: the codec found the request malformed. */
  sendCodecErrorReply(status: number, body: string, details: string): void {
    this.info?.setResponseFlag(ResponseFlag.DownstreamProtocolError);
    this.sendLocalReply(status, body, NO_HEADERS, details);
  }

  /**
   * A complete response of our own; to a gRPC request, Envoy's trailers-only answer: status 200,
   * grpc-status (`grpcStatus`, else the HTTP status's gRPC equivalent) and the body as grpc-message.
   * @param details Envoy's response code details, for the access logs
   * @param modifyHeaders what the router's route does to its replies, before the manager's headers
   */
  sendLocalReply(
    status: number,
    body: string | Buffer,
    extraHeaders: readonly string[] = NO_HEADERS,
    details?: string,
    modifyHeaders: HeaderModifier | null = null,
    grpcStatus?: number,
  ): void {
    if (!this.active) return;
    // The codec may answer a request the router is working on.
    this.router.onDownstreamReset();
    const request = this.request;
    // As Envoy, a local reply is gRPC's when the request was as it arrived, whatever filters made of it.
    const grpc = request !== null && (this.chain !== null && this.chain.makesGrpcRequests ? this.grpcRequest : isGrpc(request));
    const head = new ResponseHead(grpc ? 200 : status, false);
    head.mayEndWithTrailers = false;
    const headers = head.headers;
    // gRPC's answer carries the body as its grpc-message, and no data.
    const data = grpc || body === '' ? NO_DATA : typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    const length = data.length;
    if (grpc) {
      headers.push('content-type', 'application/grpc', 'grpc-status', String(grpcStatus ?? httpToGrpcStatus(status)));
      const message = typeof body === 'string' ? body : body.toString('utf8');
      if (message !== '' && request.method !== 'HEAD') headers.push('grpc-message', encodeGrpcMessage(message));
    } else if (length > 0) {
      headers.push('content-type', 'text/plain');
    }
    head.contentLength = head.bodyLength = length;
    for (let i = 0; i < extraHeaders.length; i++) headers.push(extraHeaders[i]);
    const info = this.info;
    // Set before the route's mutations, which may print them (Envoy's sendLocalReply).
    if (info !== null && details !== undefined) info.responseCodeDetails = details;
    modifyHeaders?.(headers);
    this.upstreamServer = null;
    const bodiless = length === 0 || request?.method === 'HEAD';
    const chain = this.chain;
    if (chain !== null && chain.encodesLocalReplies) {
      // A filter may answer again, or end the stream, on any frame of this reply.
      const generation = chain.generation;
      chain.encodeHeaders(head, bodiless);
      if (bodiless || chain.generation !== generation) return;
      chain.encodeData(data);
      if (chain.generation === generation) chain.encodeEnd(null);
      return;
    }
    this.writeHeaders(head, bodiless);
    if (bodiless) return;
    this.writeData(data);
    this.writeEnd(null);
  }

  encodeHeaders(upstream: ResponseHead, upstreamServiceTimeMs: number, extraHeaders: readonly string[]): void {
    if (!this.active) return;
    this.timers.touch();
    // The upstream's head becomes the downstream's: what the manager sets replaces the upstream's own.
    const headers = upstream.headers;
    this.upstreamServer = keepUpstreamHeaders(headers, upstream.connectionTokens);
    for (let i = 0; i < extraHeaders.length; i++) headers.push(extraHeaders[i]);
    headers.push('x-proxy-upstream-service-time', String(upstreamServiceTimeMs));
    // A response without a body ends when the router says so: on HTTP/1 the next request may start then.
    if (upstream.bodyLength === 0) this.headersOnly = upstream;
    else if (this.chain !== null && this.chain.active) this.chain.encodeHeaders(upstream, false);
    else this.writeHeaders(upstream, false);
  }

  encodeData(chunk: Buffer): boolean {
    if (!this.active) return false;
    this.timers.touch();
    const chain = this.chain;
    if (chain === null || !chain.active) return this.writeData(chunk);
    // What the filters hold is bounded by their buffer limit, not by the client's reading.
    this.writeOver = false;
    chain.encodeData(chunk);
    return this.writeOver || this.filterBackups > 0;
  }

  encodeComplete(trailers: string[] | null): void {
    if (!this.active) return;
    const headersOnly = this.headersOnly;
    const chain = this.chain !== null && this.chain.active ? this.chain : null;
    if (headersOnly !== null) {
      this.headersOnly = null;
      if (chain !== null) chain.encodeHeaders(headersOnly, true);
      else this.writeHeaders(headersOnly, true);
    } else if (chain !== null) chain.encodeEnd(trailers);
    else this.writeEnd(trailers);
  }

  // ---- FilteredStream: the response past the filters, to the codec ---------------------------

  /** The response head goes to the codec, with the headers the manager sets on every response. */
  writeHeaders(head: ResponseHead, endStream: boolean): void {
    this.addManagerHeaders(head.headers, this.upstreamServer);
    this.startResponse(head.status, head.headers, endStream);
    if (this.info !== null) this.response = head;
    const encoder = this.encoder!;
    if (endStream) this.finish();
    encoder.encodeHeaders(head, endStream);
  }

  writeData(chunk: Buffer): boolean {
    if (this.info !== null) this.info.bytesSent += chunk.length;
    return (this.writeOver = this.encoder!.encodeData(chunk));
  }

  writeEnd(trailers: string[] | null): void {
    const encoder = this.encoder!;
    const sent = trailers !== null && trailers.length > 0 ? trailers : null;
    this.trailers = sent;
    this.finish();
    encoder.encodeComplete(sent);
  }

  flush(): boolean {
    return this.active ? this.encoder!.flush() : false;
  }

  resetStream(): void {
    if (!this.active) return;
    const log = this.factory.streamLog;
    if (log.enabled('debug')) log.debug(`${this.tag()}stream reset`);
    this.stats.downstream_rq_tx_reset.inc();
    const encoder = this.encoder!;
    this.finish();
    encoder.resetStream();
  }

  /** Envoy counts the router's pauses (the upstream backed up), not the codec's pipelining ones. */
  readDisable(disable: boolean): void {
    if (!this.active) return;
    if (disable) this.stats.downstream_flow_control_paused_reading_total.inc();
    else this.stats.downstream_flow_control_resumed_reading_total.inc();
    this.encoder!.readDisable(disable);
  }

  setIdleTimeout(ms: number): void {
    this.timers.setIdleTimeout(ms);
  }

  onStreamTimeout(body: string, details: string, idle: boolean): void {
    this.router.onDownstreamReset();
    const info = this.info;
    if (info !== null) {
      if (idle) info.setResponseFlag(ResponseFlag.StreamIdleTimeout);
      info.responseCodeDetails = details;
    }
    if (this.responseStarted) this.resetStream();
    else this.sendLocalReply(408, body);
  }

  /**
   * Envoy 1.16's recreateStream: this stream ends without a response and `head` starts a new one
   * on the same encoder, the request's redirect history carried over. As there, the stream
   * replaced is logged with no request or response of its own, response code details
   * `internal_redirect`, and counts as a request in the manager's statistics; only the last
   * stream's response is charged and reaches the client.
   */
  recreateStream(head: RequestHead, history: InternalRedirectHistory): void {
    if (!this.active) return;
    const encoder = this.encoder!;
    // Who sent the request stays what the first pass decided: the head recreated is the one that
    // went upstream, with our own x-forwarded-for entry.
    this.trustedClient();
    this.active = false;
    const info = this.info;
    if (info !== null) {
      info.responseCodeDetails = 'internal_redirect';
      this.request = info.forwardedRequest = null;
      this.log(info);
    }
    this.stats.downstream_rq_active.dec();
    this.timers.stop();
    this.start(encoder);
    this.redirectHistory = history;
    this.decodeHeaders(head, true);
  }

  /** The stream is not to serve again: what outlives a request (the router's timer, the stream timers) goes. */
  dispose(): void {
    this.router.release();
    this.timers.dispose();
  }

  /** Who sent the request, decided from its head as received (before the router appends to x-forwarded-for). */
  trustedClient(): TrustedClient {
    if (this.client === null) {
      const connection = this.connection;
      this.client = trustedClient(this.factory.config, this.remoteAddress, connection.remotePort ?? 0, forwardedForOf(this.request!));
    }
    return this.client;
  }

  /** The route the request takes, for the filters (callbacks.route()). */
  route(): RouteEntry | null {
    return this.router.routeEntry(this.request!);
  }

  clearRouteCache(): void {
    this.router.clearRouteCache();
  }

  connectionInfo(): DownstreamConnectionInfo {
    return this.owner!.connectionInfo();
  }

  startTime(): number {
    return Date.now() - (this.factory.clock.eventNow() - this.startMs);
  }

  // ---- internals -----------------------------------------------------------------------------

  /** Envoy's `[C<id>][S<id>] ` line start. */
  private tag(): string {
    return `[C${this.connectionId}][S${this.streamId}] `;
  }

  /**
   * A request without x-request-id gets one; so does an edge request (use_remote_address, from
   * outside) that brought its own, unless preserve_external_request_id keeps it.
   */
  private setRequestId(head: RequestHead, config: HttpConnectionManagerConfig): void {
    const headers = head.headers;
    let at = -1;
    for (let i = 0; i < headers.length; i += 2) {
      if (headers[i] === 'x-request-id') {
        at = i;
        break;
      }
    }
    if (at < 0) headers.push('x-request-id', randomUUID());
    else if (config.useRemoteAddress && !config.preserveExternalRequestId && this.trustedClient().edge) {
      headers[at + 1] = randomUUID();
    }
  }

  /**
   * add_user_agent (Envoy's user_agent): where the node has a cluster name, the request says which
   * service cluster and node it came through, and takes the cluster as its user-agent if it has none.
   */
  private addUserAgent(head: RequestHead): void {
    const { cluster, id } = this.factory.deps.node;
    if (cluster === '') return;
    const headers = head.headers;
    setHeader(headers, 'x-proxy-downstream-service-cluster', cluster);
    const userAgent = headerValue(head, 'user-agent');
    if (userAgent === undefined || userAgent === '') setHeader(headers, 'user-agent', cluster);
    if (id !== '') setHeader(headers, 'x-proxy-downstream-service-node', id);
  }

  /**
   * date, server (as server_header_transformation says: `upstreamServer` is the upstream's, null
   * for a local reply or none) and via, which the manager sets on every response.
   */
  private addManagerHeaders(headers: string[], upstreamServer: string | null): void {
    const config = this.factory.config;
    headers.push('date', this.factory.dates.current());
    if (this.span !== null) this.span.onResponseHeaders(headers);
    const transformation = config.serverHeaderTransformation;
    if (upstreamServer !== null && transformation !== 'OVERWRITE') headers.push('server', upstreamServer);
    else if (transformation !== 'PASS_THROUGH') headers.push('server', config.serverName);
    if (config.via !== '') appendHeaderValue(headers, 'via', config.via);
  }

  /** The response head is about to go: counted, logged, and the drain decider consulted. */
  private startResponse(status: number, headers: readonly string[], endStream: boolean): void {
    this.responseStarted = true;
    this.stats.chargeResponseCode(status);
    const info = this.info;
    if (info !== null) {
      info.responseCode = status;
      info.firstDownstreamTxByteSent = info.sinceStart();
    }
    if (this.factory.deps.drain.drainClose()) this.owner!.shutdownForDrain();
    else if (this.overload.disableHttpKeepalive && this.protocol === 'http1') this.owner!.closeForOverload();
    const log = this.factory.streamLog;
    if (log.enabled('debug')) {
      log.debug(`${this.tag()}encoding headers via codec (end_stream=${endStream}):\n${headerDump([':status', String(status)])}${headerDump(headers)}`);
    }
  }

  /** The stream is over: counted, timers stopped, the connection told. Before the codec's last call, which may start the next request. */
  private finish(): void {
    this.active = false;
    if (this.info !== null) this.log(this.info);
    this.encoder = null;
    this.request = null;
    this.headersOnly = null;
    this.chain?.reset();
    this.stats.downstream_rq_active.dec();
    if (this.upgraded) {
      this.upgraded = false;
      this.stats.downstream_cx_upgrades_active.dec();
    }
    this.stats.downstream_rq_time.recordValue(this.factory.clock.eventNow() - this.startMs);
    this.timers.stop();
    this.owner!.streamEnded(this);
  }

  /** The stream ended: every access log of the connection manager hears of it, and its span finishes. */
  private log(info: StreamInfo): void {
    const now = info.sinceStart();
    if (this.responseStarted) info.lastDownstreamTxByteSent = now;
    info.requestComplete = now;
    const response = this.response;
    const trailers = this.trailers;
    this.response = this.trailers = null;
    const request = info.forwardedRequest ?? this.request;
    for (const log of this.factory.accessLogs) log.log(request, response, trailers, info);
    if (this.span !== null) {
      this.span.finish(request, response, trailers, info);
      this.span = null;
    }
  }
}

/**
 * Drops, in place, the upstream headers the downstream must not get from it: those the manager
 * sets (date, server, x-proxy-upstream-service-time) and the upstream's connection tokens.
 * Returns the upstream's server header, which the manager may keep; null when none.
 */
function keepUpstreamHeaders(headers: string[], dropped: readonly string[] | null): string | null {
  let server: string | null = null;
  let kept = 0;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i];
    if (isManagerHeader(name)) {
      if (name === 'server' && server === null) server = headers[i + 1];
      continue;
    }
    if (dropped !== null && dropped.includes(name)) continue;
    if (kept !== i) {
      headers[kept] = name;
      headers[kept + 1] = headers[i + 1];
    }
    kept += 2;
  }
  headers.length = kept;
  return server;
}

/** Response headers the manager sets itself: server, date, x-proxy-upstream-service-time. */
function isManagerHeader(name: string): boolean {
  switch (name.length) {
    case 4:
      return name === 'date';
    case 6:
      return name === 'server';
    case 29:
      return name === 'x-proxy-upstream-service-time';
    default:
      return false;
  }
}
