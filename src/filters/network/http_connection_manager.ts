// The HTTP connection manager network filter (Envoy's http_connection_manager). Its factory picks
// the codec of each connection (codec_type, ALPN, the HTTP/2 preface); HTTP/2 connections go to
// Http2ConnectionManager. This file is the HTTP/1.1 one: it parses requests off the connection,
// hands each to the router, writes the response back with Envoy's response headers, and decides
// when the connection closes (client asked, drain, an error, or a request that cannot be finished).
//
// HTTP/1 carries one request at a time, so the manager, its HTTP filters and its router are per
// connection and reused from request to request. Pipelined requests wait in the parser until
// the current response is written.

import type * as net from 'node:net';
import type * as tls from 'node:tls';
import { atField, FieldError } from '../../config/errors';
import type { HttpConnectionManagerConfig } from '../../config/model';
import { type ConnectionIds, headerDump, http1HeadDump } from '../../log/connection_log';
import type { Logger } from '../../log/logger_api';
import { DateCache } from '../../http/date_cache';
import { CodecError } from '../../http/http1/codec_error';
import { properCaseHead } from '../../http/http1/header_key_format';
import { BODY_CHUNKED, BODY_UNTIL_CLOSE, type RequestHead, type ResponseHead } from '../../http/message';
import type { ParserCallbacks } from '../../http/http1/parser';
import { type Http1Settings, RequestParser } from '../../http/http1/request_parser';
import { Http1CodecStats } from '../../http/http1/codec_stats';
import { reasonPhrase, statusLine } from '../../http/status_text';
import type { NetworkFilterFactory } from '../../listener/network_filter';
import { CoalescingWriter } from '../../network/coalescing_writer';
import { type WatermarkCallbacks, WatermarkWriter } from '../../network/watermark_writer';
import type { DrainDecider } from '../../server/drain_decider';
import type { RuntimeSource } from '../../runtime/live_runtime';
import type { StatsStore } from '../../stats/stats';
import type { ClusterManager } from '../../upstream/cluster_manager';
import { FilterHeadersStatus, type HttpFilter, type HttpFilterCallbacks, type HttpFilterFactory, type ResponseHeaderSink } from '../http/http_filter';
import { createHttpFilterFactory, type HttpFilterContext } from '../http/http_filter_registry';
import { RouteTable } from '../http/route_table';
import { type DownstreamStream, Router, type RouterConfig, routerLog } from '../http/router';
import { RouterStats } from '../http/router_stats';
import { HttpConnectionManagerStats } from './http_connection_manager_stats';
import { type StreamTimerSettings, StreamTimers, type TimedStream } from './stream_timers';
import { Http2ConnectionManager, http2ConnectionManagerLogs } from './http2_connection_manager';
import { Http2CodecStats } from '../../http/http2/codec_stats';
import { sniffHttp2Preface } from '../../http/http2/preface';
import { boundedTimerDelay } from '../../common/clock';
import { mathRandom } from '../../common/random';

const ROUTER_FILTER = 'proxy.filters.http.router';
const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
const LAST_CHUNK = '0\r\n\r\n';
/** Envoy's delayed_close_timeout: how long a closing connection waits for the client to read. */
const DELAYED_CLOSE_MS = 1000;

export interface HttpConnectionManagerDeps {
  readonly stats: StatsStore;
  readonly clusters: ClusterManager;
  readonly drain: DrainDecider;
  /** `http`. */
  readonly log: Logger;
  /** `router`. */
  readonly routerLog: Logger;
  /** `connection`: the downstream socket's own events. */
  readonly connectionLog: Logger;
  /** Numbers streams for their log lines (`[C<id>][S<id>]`). */
  readonly ids: ConnectionIds;
  /** The listener's per_connection_buffer_limit_bytes. */
  readonly bufferLimitBytes: number;
  /** Bootstrap.localAddress: what x-forwarded-for gets for a peer on loopback. */
  readonly localAddress: string | undefined;
  /** The worker's runtime, for route runtime_fraction. */
  readonly runtime: RuntimeSource;
  /** What the HTTP filters before the router read from the worker. */
  readonly filterContext: HttpFilterContext;
}

/** One filter chain's connection manager configuration, shared by its connections. */
export class HttpConnectionManagerFactory implements NetworkFilterFactory {
  readonly stats: HttpConnectionManagerStats;
  readonly http1Stats: Http1CodecStats;
  readonly http2Stats: Http2CodecStats;
  readonly http1Settings: Http1Settings;
  readonly router: RouterConfig;
  readonly streamTimers: StreamTimerSettings;
  readonly dates = new DateCache();
  /** The decoder filters before the router, in order; null when the router is alone. */
  readonly filters: readonly HttpFilterFactory[] | null;
  /** deps.log and deps.connectionLog, taken for the lines of this file. */
  readonly log: Logger;
  readonly connectionLog: Logger;
  /** The same, taken for http2_connection_manager.ts's lines. */
  readonly http2Logs: ReturnType<typeof http2ConnectionManagerLogs>;

  /** @throws FieldError at a path relative to the filter's typed_config, for a chain or route table it cannot build */
  constructor(
    readonly config: HttpConnectionManagerConfig,
    readonly deps: HttpConnectionManagerDeps,
  ) {
    this.log = deps.log.forFile(__filename);
    this.connectionLog = deps.connectionLog.forFile(__filename);
    this.http2Logs = http2ConnectionManagerLogs(deps.log, deps.connectionLog);
    const chain = config.httpFilters;
    if (chain.length === 0 || chain[chain.length - 1].name !== ROUTER_FILTER) {
      throw new FieldError('http_filters', `the last HTTP filter must be ${ROUTER_FILTER}`);
    }
    const filters = chain.slice(0, -1).map((filter, i) => {
      const factory = filter.name === ROUTER_FILTER ? null : createHttpFilterFactory(filter, deps.filterContext);
      if (factory === null) throw new FieldError(`http_filters[${i}].name`, `http filter '${filter.name}' is not supported before ${ROUTER_FILTER}`);
      return factory;
    });
    this.filters = filters.length === 0 ? null : filters;
    const routeTable = atField('route_config', () => new RouteTable(config.routeConfig, deps.runtime, mathRandom));
    const scope = deps.stats.scope(`http.${config.statPrefix}`);
    this.stats = new HttpConnectionManagerStats(scope);
    // Envoy keeps its codec statistics outside the connection manager's prefix.
    this.http1Stats = new Http1CodecStats(deps.stats.scope('http1'));
    this.http2Stats = new Http2CodecStats(deps.stats.scope('http2'));
    const common = config.commonHttpProtocolOptions;
    this.http1Settings = {
      acceptHttp10: config.httpProtocolOptions.acceptHttp10,
      defaultHostForHttp10: config.httpProtocolOptions.defaultHostForHttp10,
      maxHeadersCount: common.maxHeadersCount,
      headersWithUnderscoresAction: common.headersWithUnderscoresAction,
    };
    this.streamTimers = {
      requestTimeoutMs: config.requestTimeoutMs,
      streamIdleTimeoutMs: config.streamIdleTimeoutMs,
      maxStreamDurationMs: config.commonHttpProtocolOptions.maxStreamDurationMs,
    };
    this.router = {
      routeTable,
      clusters: deps.clusters,
      stats: new RouterStats(scope),
      useRemoteAddress: config.useRemoteAddress,
      xffNumTrustedHops: config.xffNumTrustedHops,
      localAddress: deps.localAddress,
      bufferLimitBytes: deps.bufferLimitBytes,
      clock: deps.filterContext.clock,
      random: mathRandom,
      log: routerLog(deps.routerLog),
    };
  }

  /** Open connections, for the end of a drain. */
  readonly connections = new Set<HttpConnectionManager | Http2ConnectionManager>();

  /**
   * The codec: codec_type, else ALPN `h2` on a TLS connection, else HTTP/2 prior knowledge when
   * the client opens with the connection preface (as Envoy's AUTO), else HTTP/1.
   */
  onNewConnection(socket: net.Socket, id: number): void {
    const acceptedMs = performance.now();
    const codec = this.config.codecType;
    if (codec === 'HTTP1') this.startHttp1(socket, acceptedMs, id);
    else if (codec === 'HTTP2' || (socket as tls.TLSSocket).alpnProtocol === 'h2') this.startHttp2(socket, acceptedMs, id);
    else {
      // The connection's timeouts run while the codec is not known yet; the first to end stops sniffing.
      const { idleTimeoutMs, maxConnectionDurationMs } = this.config.commonHttpProtocolOptions;
      const idleFirst = idleTimeoutMs > 0 && (maxConnectionDurationMs === 0 || idleTimeoutMs <= maxConnectionDurationMs);
      const timeout = idleFirst ? idleTimeoutMs : maxConnectionDurationMs;
      sniffHttp2Preface(socket, timeout, (http2, timedOut) =>
        http2 ? this.startHttp2(socket, acceptedMs, id) : this.startHttp1(socket, acceptedMs, id, timedOut && idleFirst),
      );
    }
  }

  /** `idle`: the client sent nothing for the whole idle timeout. */
  private startHttp1(socket: net.Socket, acceptedMs: number, id: number, idle = false): void {
    if (this.log.enabled('debug')) this.log.debug(`[C${id}] codec: http1`);
    const connection = new HttpConnectionManager(this, socket, acceptedMs, id);
    this.connections.add(connection);
    // Sniffing paused the socket and put back what it read.
    if (socket.isPaused()) socket.resume();
    if (idle) connection.onIdleTimeout();
  }

  private startHttp2(socket: net.Socket, acceptedMs: number, id: number): void {
    if (this.log.enabled('debug')) this.log.debug(`[C${id}] codec: http2`);
    this.connections.add(new Http2ConnectionManager(this, socket, acceptedMs, id));
  }

  closeIdleConnections(): void {
    for (const connection of this.connections) connection.closeIfIdle();
  }
}

export class HttpConnectionManager implements ParserCallbacks<RequestHead>, DownstreamStream, HttpFilterCallbacks, WatermarkCallbacks, TimedStream {
  readonly protocol = 'http1';
  readonly remoteAddress: string;
  readonly connection: net.Socket;
  private readonly parser: RequestParser;
  private readonly router: Router;
  /** This connection's filters before the router; null when there are none (the fast path). */
  private readonly filters: readonly HttpFilter[] | null;
  /** Headers the filters set on the response being written. */
  private readonly filterHeaders: FilterHeaders | null;
  private readonly stats: HttpConnectionManagerStats;
  private readonly bufferLimit: number;
  private readonly writer: WatermarkWriter;
  private readonly output: CoalescingWriter;
  /** The current stream's timers, reused from request to request. */
  private readonly timers: StreamTimers;
  /** header_key_format proper_case_words: response header names are written Proper-Case. */
  private readonly properCase: boolean;

  // The current stream.
  /** Its number in log lines. */
  streamId = 0;
  private streamActive = false;
  private request: RequestHead | null = null;
  private requestComplete = false;
  private responseStarted = false;
  /** The response has a body, framed with chunked encoding. */
  private responseChunked = false;
  /** The response must not have a body (HEAD, 204, 304). */
  private responseBodiless = false;
  private closeAfterResponse = false;
  /** The filters saw this request's head: they see its response head too. */
  private filtersActive = false;
  /** The filter answering this request itself: the rest of the request goes to it. */
  private stoppedBy: HttpFilter | null = null;

  // The connection.
  private closing = false;
  private closedLocally = false;
  private remoteEnded = false;
  private readDisables = 0;
  /** Reading stopped because pipelined requests piled up while a response was pending. */
  private pipelineFull = false;
  private idleTimer: NodeJS.Timeout | null = null;
  private durationTimer: NodeJS.Timeout | null = null;
  private delayedCloseTimer: NodeJS.Timeout | null = null;
  private requestStartMs = 0;

  /** `connectionStartMs`: performance.now() when the connection was accepted. */
  constructor(
    private readonly factory: HttpConnectionManagerFactory,
    private readonly socket: net.Socket,
    private readonly connectionStartMs: number,
    readonly connectionId: number,
  ) {
    this.parser = new RequestParser(this, factory.http1Settings, factory.http1Stats);
    this.stats = factory.stats;
    this.bufferLimit = factory.deps.bufferLimitBytes;
    this.remoteAddress = socket.remoteAddress ?? '';
    this.connection = socket;
    this.router = new Router(factory.router, this);
    this.filters = factory.filters === null ? null : factory.filters.map((f) => f.createFilter(this));
    this.filterHeaders = this.filters === null ? null : new FilterHeaders();
    this.writer = new WatermarkWriter(
      socket,
      this.bufferLimit,
      { written: this.stats.downstream_cx_tx_bytes_total, buffered: this.stats.downstream_cx_tx_bytes_buffered },
      this,
    );
    this.output = new CoalescingWriter(this.writer);
    this.timers = new StreamTimers(factory.streamTimers, this.stats, this);
    this.properCase = factory.config.httpProtocolOptions.headerKeyFormat === 'proper_case_words';
    // A client may half-close after its request and still read the response.
    socket.allowHalfOpen = true;
    socket.on('data', this.onSocketData);
    socket.on('end', this.onSocketEnd);
    socket.on('error', ignoreError);
    socket.on('close', this.onSocketClose);
    const stats = this.stats;
    stats.downstream_cx_total.inc();
    stats.downstream_cx_active.inc();
    stats.downstream_cx_http1_total.inc();
    stats.downstream_cx_http1_active.inc();
    const idleTimeout = factory.config.commonHttpProtocolOptions.idleTimeoutMs;
    if (idleTimeout > 0) this.idleTimer = setTimeout(this.onIdleTimeout, boundedTimerDelay(idleTimeout));
    const maxDuration = factory.config.commonHttpProtocolOptions.maxConnectionDurationMs;
    if (maxDuration > 0) this.durationTimer = setTimeout(this.onMaxConnectionDuration, boundedTimerDelay(remainingMs(maxDuration, connectionStartMs)));
  }

  // ---- ParserCallbacks: the request ------------------------------------------------------

  onMessageHead(head: RequestHead): void {
    const stats = this.stats;
    stats.downstream_rq_total.inc();
    stats.downstream_rq_http1_total.inc();
    stats.downstream_rq_active.inc();
    this.requestStartMs = performance.now();
    this.streamActive = true;
    this.streamId = this.factory.deps.ids.nextStream();
    this.request = head;
    this.requestComplete = head.bodyLength === 0;
    const log = this.factory.log;
    if (log.enabled('debug')) {
      log.debug(`[C${this.connectionId}] new stream`);
      const pseudo = [':authority', head.authority, ':path', head.path, ':method', head.method];
      log.debug(`[C${this.connectionId}][S${this.streamId}] request headers complete (end_stream=${this.requestComplete}):\n${headerDump(pseudo)}${headerDump(head.headers)}`);
    }
    this.responseStarted = false;
    this.closeAfterResponse = head.connectionClose;
    this.timers.start(this.requestComplete);
    if (head.authority === '') {
      this.sendLocalReply(400, '');
      return;
    }
    if (head.expectContinue) {
      this.output.text(CONTINUE);
      this.output.flush();
      stats.chargeResponseCode(100);
    }
    if (this.filters !== null && this.decodeFilterHeaders(this.filters, head)) return;
    this.router.decodeHeaders(head);
  }

  /** Runs the filters on a request head; true when one of them took the request over. */
  private decodeFilterHeaders(filters: readonly HttpFilter[], head: RequestHead): boolean {
    this.filtersActive = true;
    for (const filter of filters) {
      if (filter.decodeHeaders(head, this.requestComplete) === FilterHeadersStatus.StopIteration) {
        // The filter may have answered already, which ended the stream.
        if (this.streamActive) this.stoppedBy = filter;
        return true;
      }
    }
    return false;
  }

  onMessageBody(chunk: Buffer): void {
    if (!this.streamActive) return;
    this.timers.touch();
    if (this.stoppedBy !== null) this.stoppedBy.decodeData(chunk);
    else this.router.decodeData(chunk);
  }

  onMessageComplete(): void {
    if (!this.streamActive) return;
    this.requestComplete = true;
    this.timers.requestComplete();
    // Pipelined requests wait for this response.
    this.parser.pause();
    if (this.stoppedBy !== null) this.stoppedBy.decodeComplete();
    else this.router.decodeComplete();
  }

  // ---- DownstreamStream: the response ----------------------------------------------------

  sendLocalReply(status: number, body: string, extraHeaders: readonly string[] = NO_HEADERS): void {
    const length = Buffer.byteLength(body);
    const close = this.closesAfterResponse();
    const dates = this.factory.dates;
    let head = `${statusLine(status)}content-length: ${length}\r\n`;
    if (length > 0) head += 'content-type: text/plain\r\n';
    head += `date: ${dates.current()}\r\nserver: ${this.factory.config.serverName}\r\n`;
    for (let i = 0; i < extraHeaders.length; i += 2) head += `${extraHeaders[i]}: ${extraHeaders[i + 1]}\r\n`;
    if (this.filtersActive) head += this.encodeFilterHeaders(status, NO_HEADERS).text;
    head += connectionHeader(close, this.request?.http10 === true);
    if (this.properCase) head = properCaseHead(head);
    this.responseStarted = true;
    this.stats.chargeResponseCode(status);
    this.logEncodedHead(head, length === 0 || this.request?.method === 'HEAD');
    this.output.text(`${head}\r\n`);
    if (length > 0 && this.request?.method !== 'HEAD') this.output.bytes(Buffer.from(body, 'utf8'));
    this.output.flush();
    this.endStream(close);
  }

  encodeHeaders(upstream: ResponseHead, upstreamServiceTimeMs: number, extraHeaders: readonly string[]): void {
    const status = upstream.status;
    const request = this.request!;
    let close = this.closesAfterResponse();
    this.responseStarted = true;
    this.responseBodiless = request.method === 'HEAD' || status === 204 || status === 304;
    this.responseChunked = false;
    this.timers.touch();
    this.stats.chargeResponseCode(status);

    let head = statusLine(status);
    const headers = upstream.headers;
    const dropped = upstream.connectionTokens;
    const filtered = this.filtersActive ? this.encodeFilterHeaders(status, headers) : null;
    const replaced = filtered !== null && filtered.names.length > 0 ? filtered.names : null;
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i];
      if (isReplacedResponseHeader(name) || (dropped !== null && dropped.includes(name))) continue;
      if (replaced !== null && replaced.includes(name)) continue;
      head += `${name}: ${headers[i + 1]}\r\n`;
    }
    if (filtered !== null) head += filtered.text;
    for (let i = 0; i < extraHeaders.length; i += 2) head += `${extraHeaders[i]}: ${extraHeaders[i + 1]}\r\n`;
    if (upstream.contentLength >= 0 && upstream.bodyLength !== BODY_CHUNKED && upstream.bodyLength !== BODY_UNTIL_CLOSE) {
      head += `content-length: ${upstream.contentLength}\r\n`;
    } else if (request.http10) {
      // HTTP/1.0 has no chunked coding: the close ends the body (Envoy does the same).
      if (!this.responseBodiless) close = true;
    } else if (!this.responseBodiless) {
      this.responseChunked = true;
      // Codings the upstream applied stay on the body, chunked on top of them.
      const codings = upstream.transferCodings;
      head += codings === null ? 'transfer-encoding: chunked\r\n' : `transfer-encoding: ${codings}, chunked\r\n`;
    }
    head += `date: ${this.factory.dates.current()}\r\nserver: ${this.factory.config.serverName}\r\n`;
    head += `x-proxy-upstream-service-time: ${upstreamServiceTimeMs}\r\n`;
    if (close) this.closeAfterResponse = true;
    head += connectionHeader(close, request.http10);
    if (this.properCase) head = properCaseHead(head);
    this.logEncodedHead(head, this.responseBodiless || upstream.bodyLength === 0);
    // Held until the body, or the end of this batch of upstream input, joins it.
    this.output.text(`${head}\r\n`);
  }

  encodeData(chunk: Buffer): boolean {
    if (this.responseBodiless || chunk.length === 0) return false;
    this.timers.touch();
    if (!this.responseChunked) return this.output.bytes(chunk);
    this.output.text(`${chunk.length.toString(16)}\r\n`);
    const over = this.output.bytes(chunk);
    this.output.text('\r\n');
    return over;
  }

  encodeComplete(): void {
    if (this.responseChunked) this.output.text(LAST_CHUNK);
    this.output.flush();
    this.endStream(this.closeAfterResponse);
  }

  flush(): boolean {
    return this.output.flush();
  }

  resetStream(): void {
    const log = this.factory.log;
    if (log.enabled('debug')) log.debug(`[C${this.connectionId}][S${this.streamId}] stream reset`);
    this.stats.downstream_rq_tx_reset.inc();
    this.output.discard();
    this.destroy();
  }

  /** Envoy counts the router's pauses (the upstream backed up), not the codec's pipelining ones. */
  readDisable(disable: boolean): void {
    if (disable) this.stats.downstream_flow_control_paused_reading_total.inc();
    else this.stats.downstream_flow_control_resumed_reading_total.inc();
    this.disableReading(disable);
  }

  // ---- WatermarkCallbacks: the response ------------------------------------------------------

  /** The router pauses the upstream itself, from encodeData's answer. */
  onAboveHighWatermark(): void {}

  onBelowLowWatermark(): void {
    this.router.onDownstreamDrained();
  }

  // ---- the connection ------------------------------------------------------------------------

  private readonly onSocketData = (chunk: Buffer): void => {
    this.stats.downstream_cx_rx_bytes_total.add(chunk.length);
    if (this.closing) return;
    const log = this.factory.log;
    if (log.enabled('trace')) log.trace(`[C${this.connectionId}] parsing ${chunk.length} bytes`);
    try {
      this.parser.execute(chunk);
    } catch (e) {
      if (!(e instanceof CodecError)) throw e;
      this.protocolError(e);
      return;
    }
    this.router.onDownstreamReadEnd();
    // Held-back pipelined requests (the parser is paused while a response is pending) count
    // against the buffer limit; a head still being assembled does not.
    if (this.streamActive && this.requestComplete && this.parser.bufferedBytes > this.bufferLimit && !this.pipelineFull) {
      this.pipelineFull = true;
      this.disableReading(true);
    }
  };

  private readonly onSocketEnd = (): void => {
    this.remoteEnded = true;
    if (!this.streamActive) this.closeGracefully();
    // A request cut short cannot be answered; a complete one still gets its response.
    else if (!this.requestComplete) this.destroy();
  };

  private readonly onSocketClose = (): void => {
    this.factory.connections.delete(this);
    this.writer.release();
    const stats = this.stats;
    stats.downstream_cx_active.dec();
    stats.downstream_cx_http1_active.dec();
    stats.downstream_cx_destroy.inc();
    const now = performance.now();
    stats.downstream_cx_length_ms.recordValue(now - this.connectionStartMs);
    if (this.closedLocally) stats.downstream_cx_destroy_local.inc();
    else stats.downstream_cx_destroy_remote.inc();
    const log = this.factory.connectionLog;
    if (log.enabled('debug')) {
      if (!this.closedLocally) log.debug(`[C${this.connectionId}] remote close`);
      log.debug(`[C${this.connectionId}] closing socket: ${this.closedLocally ? 1 : 0}`);
    }
    if (this.streamActive) {
      stats.downstream_cx_destroy_active_rq.inc();
      stats.downstream_rq_rx_reset.inc();
      this.streamActive = false;
      stats.downstream_rq_active.dec();
      stats.downstream_rq_time.recordValue(now - this.requestStartMs);
    }
    this.router.destroy();
    this.timers.dispose();
    for (const timer of [this.idleTimer, this.durationTimer, this.delayedCloseTimer]) {
      if (timer !== null) clearTimeout(timer);
    }
  };

  /** Closes the connection if no request is in flight (drain); counted as a drain close. */
  closeIfIdle(): void {
    if (this.streamActive || this.closing) return;
    this.stats.downstream_cx_drain_close.inc();
    this.closeGracefully();
  }

  /** Public for the factory: a client silent through the AUTO codec's sniffing has used up its idle time. */
  readonly onIdleTimeout = (): void => {
    // A stream in progress re-arms the timer when it ends.
    if (this.streamActive || this.closing) return;
    this.stats.downstream_cx_idle_timeout.inc();
    this.closeGracefully();
  };

  /** max_connection_duration: an idle connection closes now, a busy one after its response. */
  private readonly onMaxConnectionDuration = (): void => {
    this.durationTimer = null;
    this.stats.downstream_cx_max_duration_reached.inc();
    if (this.streamActive) this.closeAfterResponse = true;
    else this.closeGracefully();
  };

  onStreamTimeout(body: string): void {
    this.router.onDownstreamReset();
    if (this.responseStarted) this.resetStream();
    else this.sendLocalReply(408, body);
  }

  /** Whether the response about to start closes the connection; consults the drain decider. */
  private closesAfterResponse(): boolean {
    if (this.factory.deps.drain.drainClose()) {
      this.stats.downstream_cx_drain_close.inc();
      return true;
    }
    return this.closeAfterResponse || this.remoteEnded || !this.requestComplete;
  }

  /** Envoy's `encoding headers via codec` line, from the head as written. */
  private logEncodedHead(head: string, endStream: boolean): void {
    const log = this.factory.log;
    if (log.enabled('debug')) {
      log.debug(`[C${this.connectionId}][S${this.streamId}] encoding headers via codec (end_stream=${endStream}):\n${http1HeadDump(head)}`);
    }
  }

  /** The filters, last first, see the response head; what they set is returned. */
  private encodeFilterHeaders(status: number, headers: readonly string[]): FilterHeaders {
    const filters = this.filters!;
    const out = this.filterHeaders!;
    out.reset();
    for (let i = filters.length - 1; i >= 0; i--) filters[i].encodeHeaders(status, headers, out);
    return out;
  }

  /** The response is written: the stream is over, and maybe the connection. */
  private endStream(close: boolean): void {
    this.streamActive = false;
    this.request = null;
    this.filtersActive = false;
    this.stoppedBy = null;
    this.timers.stop();
    this.stats.downstream_rq_active.dec();
    this.stats.downstream_rq_time.recordValue(performance.now() - this.requestStartMs);
    // An unfinished request leaves the rest of its body on the wire: the connection cannot go on.
    if (close || !this.requestComplete || this.remoteEnded) {
      this.closeGracefully();
      return;
    }
    this.idleTimer?.refresh();
    if (this.pipelineFull) {
      this.pipelineFull = false;
      this.disableReading(false);
    }
    try {
      this.parser.resume();
    } catch (e) {
      if (!(e instanceof CodecError)) throw e;
      this.protocolError(e);
      return;
    }
    // Pipelined requests just parsed send what they queued.
    this.router.onDownstreamReadEnd();
  }

  private protocolError(error: CodecError): void {
    this.stats.downstream_cx_protocol_error.inc();
    if (this.factory.log.enabled('debug')) {
      this.factory.log.debug(`protocol error from ${this.remoteAddress}: ${error.details}`);
    }
    if (this.streamActive && this.responseStarted) {
      this.destroy();
      return;
    }
    if (!this.streamActive) {
      // The error came before a request head: account for it as a request of its own.
      this.streamActive = true;
      this.streamId = this.factory.deps.ids.nextStream();
      this.request = null;
      this.stats.downstream_rq_total.inc();
      this.stats.downstream_rq_http1_total.inc();
      this.stats.downstream_rq_active.inc();
      this.requestStartMs = performance.now();
    } else {
      this.router.onDownstreamReset();
    }
    this.closeAfterResponse = true;
    this.requestComplete = false;
    this.sendLocalReply(error.status, reasonPhrase(error.status));
  }

  /** Flushes what was written, half-closes, and waits a little for the client to close. */
  private closeGracefully(): void {
    if (this.closing) return;
    this.closing = true;
    this.parser.pause();
    this.socket.end();
    this.delayedCloseTimer = setTimeout(this.destroy, DELAYED_CLOSE_MS);
  }

  private readonly destroy = (): void => {
    if (this.socket.destroyed) return;
    this.closedLocally = true;
    this.socket.destroy();
  };

  /** Reading stops while anyone wants it stopped. */
  private disableReading(disable: boolean): void {
    if (disable) {
      if (this.readDisables++ === 0) this.socket.pause();
    } else if (--this.readDisables === 0) {
      this.socket.resume();
    }
  }
}

export const NO_HEADERS: readonly string[] = [];

/** The headers the filters set on one response, as head lines; reused from response to response. */
export class FilterHeaders implements ResponseHeaderSink {
  /** As HTTP/1 head lines. */
  text = '';
  readonly names: string[] = [];
  /** As [name, value, ...], for HTTP/2. */
  readonly pairs: string[] = [];

  reset(): void {
    this.text = '';
    this.names.length = 0;
    this.pairs.length = 0;
  }

  set(name: string, value: string): void {
    this.names.push(name);
    this.pairs.push(name, value);
    this.text += `${name}: ${value}\r\n`;
  }
}

/** What is left of `durationMs` counted from `startMs` (a performance.now() reading). */
export function remainingMs(durationMs: number, startMs: number): number {
  return Math.max(0, durationMs - (performance.now() - startMs));
}

/** Says whether the connection stays open: HTTP/1.1 only when it does not, HTTP/1.0 either way. */
function connectionHeader(close: boolean, http10: boolean): string {
  if (close) return 'connection: close\r\n';
  return http10 ? 'connection: keep-alive\r\n' : '';
}

/** Response headers the manager sets itself: server, date, x-proxy-upstream-service-time. */
export function isReplacedResponseHeader(name: string): boolean {
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

function ignoreError(): void {}
