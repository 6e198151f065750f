// The HTTP connection manager on a downstream HTTP/2 connection: node:http2 (nghttp2) is the
// server codec, and each stream is an ActiveStream with its own HTTP filters and router, as in
// Envoy's ConnectionManagerImpl. Drain is GOAWAY: streams in flight finish, new ones are refused.

import * as http2 from 'node:http2';
import type * as net from 'node:net';
import type { HttpProtocol } from '../../http/codec';
import { MalformedHeaders, addHeaders, requestHeadOf } from '../../http/http2/header_map';
import { dropUnderscoreHeaders, hasUnderscoreHeader } from '../../http/underscore_headers';
import type { RequestHead, ResponseHead } from '../../http/message';
import { FilterHeadersStatus, type HttpFilter, type HttpFilterCallbacks } from '../http/http_filter';
import { type DownstreamStream, Router } from '../http/router';
import { headerDump } from '../../log/connection_log';
import type { Logger } from '../../log/logger_api';
import { FilterHeaders, type HttpConnectionManagerFactory, NO_HEADERS, isReplacedResponseHeader, remainingMs } from './http_connection_manager';
import type { HttpConnectionManagerStats } from './http_connection_manager_stats';
import { StreamTimers, type TimedStream } from './stream_timers';
import { boundedTimerDelay } from '../../common/clock';

const { NGHTTP2_FLAG_END_STREAM } = http2.constants;

/** The `http` and `connection` loggers taken for this file's lines: once per factory, never per connection. */
export function http2ConnectionManagerLogs(http: Logger, connection: Logger): { readonly http: Logger; readonly connection: Logger } {
  return { http: http.forFile(__filename), connection: connection.forFile(__filename) };
}

export class Http2ConnectionManager {
  readonly stats: HttpConnectionManagerStats;
  readonly session: http2.ServerHttp2Session;
  readonly remoteAddress: string;
  readonly scheme: string;
  private readonly streams = new Set<ActiveStream>();
  private draining = false;
  /** We sent GOAWAY (drain, idle timeout): the close is ours. */
  private closedLocally = false;
  private idleTimer: NodeJS.Timeout | null = null;
  private durationTimer: NodeJS.Timeout | null = null;
  /** The factory's `http` and `connection` loggers, taken for the lines of this file. */
  readonly log: Logger;
  private readonly connectionLog: Logger;

  /** `connectionStartMs`: performance.now() when the connection was accepted. */
  constructor(
    readonly factory: HttpConnectionManagerFactory,
    readonly socket: net.Socket,
    private readonly connectionStartMs: number,
    readonly connectionId: number,
  ) {
    this.stats = factory.stats;
    this.log = factory.http2Logs.http;
    this.connectionLog = factory.http2Logs.connection;
    this.remoteAddress = socket.remoteAddress ?? '';
    this.scheme = 'encrypted' in socket && socket.encrypted === true ? 'https' : 'http';
    const options = factory.config.http2ProtocolOptions;
    const stats = this.stats;
    stats.downstream_cx_total.inc();
    stats.downstream_cx_active.inc();
    stats.downstream_cx_http2_total.inc();
    stats.downstream_cx_http2_active.inc();
    socket.on('error', ignoreError);
    // Before node:http2's own listener: the streams still open are the ones the close cut short.
    socket.on('close', this.onSocketClose);
    this.session = http2.performServerHandshake(socket, {
      settings: {
        maxConcurrentStreams: options.maxConcurrentStreams,
        initialWindowSize: options.initialStreamWindowSize,
        headerTableSize: options.hpackTableSize,
      },
      // The windows bound what is buffered per stream and connection, as in Envoy.
      maxSessionMemory: Math.max(10, Math.ceil(options.initialConnectionWindowSize / (1024 * 1024)) * 2),
      // max_headers_count is checked per stream, so that it is counted and reset as in Envoy;
      // nghttp2's own limit (a silent ENHANCE_YOUR_CALM) is only a backstop against floods.
      maxHeaderListPairs: Math.max(128, 2 * factory.config.commonHttpProtocolOptions.maxHeadersCount),
    });
    const session = this.session;
    session.on('error', this.onSessionError);
    session.on('close', this.onSessionClose);
    session.on('stream', this.onStream);
    if (options.initialConnectionWindowSize > 65535) session.setLocalWindowSize(options.initialConnectionWindowSize);
    this.armIdleTimer();
    const maxDuration = factory.config.commonHttpProtocolOptions.maxConnectionDurationMs;
    if (maxDuration > 0) this.durationTimer = setTimeout(this.onMaxConnectionDuration, boundedTimerDelay(remainingMs(maxDuration, connectionStartMs)));
  }

  /** Drain (listener drain, hot restart): GOAWAY now, close once the streams in flight end. */
  closeIfIdle(): void {
    this.startDrain();
  }

  /** The drain decider asked for it while answering a stream: GOAWAY, as Envoy's shutdownNotice/goAway. */
  startDrain(): void {
    if (this.goAway()) this.stats.downstream_cx_drain_close.inc();
  }

  /** GOAWAY, then the close once the streams in flight end; false when that began already. */
  private goAway(): boolean {
    if (this.draining || this.session.destroyed) return false;
    this.draining = true;
    this.closedLocally = true;
    this.session.close();
    return true;
  }

  /** max_connection_duration: drained as on a drain, without counting as one. */
  private readonly onMaxConnectionDuration = (): void => {
    this.durationTimer = null;
    this.stats.downstream_cx_max_duration_reached.inc();
    this.goAway();
  };

  streamEnded(stream: ActiveStream): void {
    this.streams.delete(stream);
    if (this.streams.size === 0) this.armIdleTimer();
  }

  private readonly onStream = (stream: http2.ServerHttp2Stream, _headers: unknown, flags: number, raw: string[]): void => {
    if (this.idleTimer !== null) {
      clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
    const active = new ActiveStream(this, stream);
    this.streams.add(active);
    active.start(raw, (flags & NGHTTP2_FLAG_END_STREAM) !== 0);
  };

  /** Envoy's idle_timeout: no stream for that long, the connection goes (GOAWAY first). */
  private armIdleTimer(): void {
    const timeout = this.factory.config.commonHttpProtocolOptions.idleTimeoutMs;
    if (timeout <= 0 || this.idleTimer !== null) return;
    this.idleTimer = setTimeout(this.onIdleTimeout, boundedTimerDelay(timeout));
  }

  private readonly onIdleTimeout = (): void => {
    this.idleTimer = null;
    if (this.streams.size > 0 || this.session.destroyed) return;
    this.stats.downstream_cx_idle_timeout.inc();
    this.closedLocally = true;
    this.session.close();
  };

  /**
   * nghttp2 refused what the peer sent (a bad preface, a frame it cannot parse): it sent GOAWAY
   * and node:http2 closes the connection, then reports ERR_HTTP2_ERROR. Envoy counts a codec
   * error as a protocol error and closes the connection itself.
   */
  private readonly onSessionError = (error: Error & { code?: string }): void => {
    if (error.code !== 'ERR_HTTP2_ERROR') return;
    this.stats.downstream_cx_protocol_error.inc();
    this.closedLocally = true;
  };

  private readonly onSocketClose = (): void => {
    this.factory.connections.delete(this);
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    if (this.durationTimer !== null) clearTimeout(this.durationTimer);
    const stats = this.stats;
    stats.downstream_cx_active.dec();
    stats.downstream_cx_http2_active.dec();
    stats.downstream_cx_destroy.inc();
    stats.downstream_cx_length_ms.recordValue(performance.now() - this.connectionStartMs);
    if (this.streams.size > 0) stats.downstream_cx_destroy_active_rq.inc();
    for (const stream of [...this.streams]) stream.onConnectionClosed();
    this.factory.deps.clusters.releaseDownstream(this.socket);
  };

  /** After the socket's close and the session's error: only now is it known whose close it was. */
  private readonly onSessionClose = (): void => {
    if (this.closedLocally) this.stats.downstream_cx_destroy_local.inc();
    else this.stats.downstream_cx_destroy_remote.inc();
    const log = this.connectionLog;
    if (log.enabled('debug')) {
      if (!this.closedLocally) log.debug(`[C${this.connectionId}] remote close`);
      log.debug(`[C${this.connectionId}] closing socket: ${this.closedLocally ? 1 : 0}`);
    }
  };
}

/** One request and its response on an HTTP/2 connection (Envoy's ActiveStream). */
class ActiveStream implements DownstreamStream, HttpFilterCallbacks, TimedStream {
  readonly protocol: HttpProtocol = 'http2';
  readonly remoteAddress: string;
  readonly connection: net.Socket;
  readonly connectionId: number;
  readonly streamId: number;
  private readonly router: Router;
  private readonly filters: readonly HttpFilter[] | null;
  private readonly stats: HttpConnectionManagerStats;
  private request: RequestHead | null = null;
  private active = true;
  private responseStarted = false;
  private responseEnded = false;
  private filtersActive = false;
  private stoppedBy: HttpFilter | null = null;
  private readonly timers: StreamTimers;
  private readonly startMs = performance.now();

  constructor(
    private readonly owner: Http2ConnectionManager,
    private readonly stream: http2.ServerHttp2Stream,
  ) {
    const factory = owner.factory;
    this.stats = owner.stats;
    this.remoteAddress = owner.remoteAddress;
    this.connection = owner.socket;
    this.connectionId = owner.connectionId;
    this.streamId = factory.deps.ids.nextStream();
    this.router = new Router(factory.router, this);
    this.filters = factory.filters === null ? null : factory.filters.map((f) => f.createFilter(this));
    this.timers = new StreamTimers(factory.streamTimers, this.stats, this);
  }

  start(raw: string[], endStream: boolean): void {
    const stats = this.stats;
    stats.downstream_rq_total.inc();
    stats.downstream_rq_http2_total.inc();
    stats.downstream_rq_active.inc();
    const stream = this.stream;
    stream.on('error', ignoreError);
    stream.on('close', this.onClose);
    stream.on('drain', this.onDrain);
    this.timers.start(endStream);
    if (!this.acceptsHeaderList(raw)) return;
    let head: RequestHead;
    try {
      head = requestHeadOf(raw, endStream, this.owner.scheme);
    } catch (e) {
      if (!(e instanceof MalformedHeaders)) throw e;
      this.owner.factory.http2Stats.rx_messaging_error.inc();
      this.sendLocalReply(400, '');
      return;
    }
    this.request = head;
    const log = this.owner.log;
    if (log.enabled('debug')) {
      log.debug(`[C${this.connectionId}] new stream`);
      const pseudo = [':authority', head.authority, ':path', head.path, ':method', head.method, ':scheme', head.scheme];
      log.debug(`[C${this.connectionId}][S${this.streamId}] request headers complete (end_stream=${endStream}):\n${headerDump(pseudo)}${headerDump(head.headers)}`);
    }
    if (!endStream) {
      stream.on('data', this.onData);
      stream.on('end', this.onEnd);
    }
    if (head.authority === '') {
      this.sendLocalReply(400, '');
      return;
    }
    if (this.filters !== null && this.decodeFilterHeaders(this.filters, head, endStream)) return;
    this.router.decodeHeaders(head);
    if (endStream && this.active) this.router.decodeComplete();
  }

  /**
   * What Envoy's HTTP/2 codec checks as the header list arrives: headers_with_underscores_action
   * and max_headers_count (pseudo-headers included). False when the stream was reset for it.
   */
  private acceptsHeaderList(raw: string[]): boolean {
    const options = this.owner.factory.config.commonHttpProtocolOptions;
    const codecStats = this.owner.factory.http2Stats;
    let count = raw.length / 2;
    if (options.headersWithUnderscoresAction !== 'ALLOW') {
      if (options.headersWithUnderscoresAction === 'REJECT_REQUEST') {
        if (hasUnderscoreHeader(raw)) {
          codecStats.requests_rejected_with_underscores_in_headers.inc();
          this.resetByCodec();
          return false;
        }
      } else {
        const dropped = dropUnderscoreHeaders(raw);
        if (dropped > 0) codecStats.dropped_headers_with_underscores.add(dropped);
        count -= dropped;
      }
    }
    if (count > options.maxHeadersCount) {
      codecStats.header_overflow.inc();
      this.resetByCodec();
      return false;
    }
    return true;
  }

  /** The codec refuses the stream (RST_STREAM INTERNAL_ERROR); Envoy counts it as a reset the stream saw. */
  private resetByCodec(): void {
    this.stats.downstream_rq_rx_reset.inc();
    this.owner.factory.http2Stats.tx_reset.inc();
    resetWithInternalError(this.stream);
    this.endStream();
  }

  private decodeFilterHeaders(filters: readonly HttpFilter[], head: RequestHead, endStream: boolean): boolean {
    this.filtersActive = true;
    for (const filter of filters) {
      if (filter.decodeHeaders(head, endStream) === FilterHeadersStatus.StopIteration) {
        if (this.active) {
          this.stoppedBy = filter;
          if (endStream) filter.decodeComplete();
        }
        return true;
      }
    }
    return false;
  }

  /** Envoy's `encoding headers via codec` line. */
  private logEncodedHeaders(headers: http2.OutgoingHttpHeaders, endStream: boolean): void {
    const log = this.owner.log;
    if (!log.enabled('debug')) return;
    const pairs = Object.entries(headers).flatMap(([name, value]) => [value ?? ''].flat().flatMap((v) => [name, String(v)]));
    log.debug(`[C${this.connectionId}][S${this.streamId}] encoding headers via codec (end_stream=${endStream}):\n${headerDump(pairs)}`);
  }

  // ---- DownstreamStream -------------------------------------------------------------------

  sendLocalReply(status: number, body: string, extraHeaders: readonly string[] = NO_HEADERS): void {
    if (!this.active || this.stream.destroyed) return;
    const length = Buffer.byteLength(body);
    const headers: http2.OutgoingHttpHeaders = { ':status': status, 'content-length': length };
    if (length > 0) headers['content-type'] = 'text/plain';
    this.addProxyHeaders(headers);
    addHeaders(headers, extraHeaders);
    if (this.filtersActive) addHeaders(headers, this.encodeFilterHeaders(status, NO_HEADERS).pairs);
    this.responseStarted = true;
    this.stats.chargeResponseCode(status);
    this.maybeDrain();
    const bodiless = length === 0 || this.request?.method === 'HEAD';
    this.logEncodedHeaders(headers, bodiless);
    this.stream.respond(headers, { endStream: bodiless });
    if (!bodiless) this.stream.end(body);
    this.endStream();
  }

  encodeHeaders(upstream: ResponseHead, upstreamServiceTimeMs: number, extraHeaders: readonly string[]): void {
    if (!this.active || this.stream.destroyed) return;
    const status = upstream.status;
    this.responseStarted = true;
    this.stats.chargeResponseCode(status);
    this.timers.touch();
    const headers: http2.OutgoingHttpHeaders = { ':status': status };
    const source = upstream.headers;
    const dropped = upstream.connectionTokens;
    const filtered = this.filtersActive ? this.encodeFilterHeaders(status, source) : null;
    const replaced = filtered !== null && filtered.names.length > 0 ? filtered.names : null;
    const kept: string[] = [];
    for (let i = 0; i < source.length; i += 2) {
      const name = source[i];
      if (isReplacedResponseHeader(name) || (dropped !== null && dropped.includes(name))) continue;
      if (replaced !== null && replaced.includes(name)) continue;
      kept.push(name, source[i + 1]);
    }
    addHeaders(headers, kept);
    if (filtered !== null) addHeaders(headers, filtered.pairs);
    addHeaders(headers, extraHeaders);
    if (upstream.contentLength >= 0 && upstream.bodyLength >= 0) headers['content-length'] = upstream.contentLength;
    this.addProxyHeaders(headers);
    headers['x-proxy-upstream-service-time'] = String(upstreamServiceTimeMs);
    this.maybeDrain();
    const endStream = upstream.bodyLength === 0 || this.request?.method === 'HEAD' || status === 204 || status === 304;
    this.logEncodedHeaders(headers, endStream);
    this.stream.respond(headers, { endStream });
    if (endStream) this.responseEnded = true;
  }

  encodeData(chunk: Buffer): boolean {
    if (this.responseEnded || chunk.length === 0 || this.stream.destroyed) return false;
    this.timers.touch();
    return !this.stream.write(chunk);
  }

  encodeComplete(): void {
    if (!this.active) return;
    if (!this.responseEnded && !this.stream.destroyed) this.stream.end();
    this.endStream();
  }

  flush(): boolean {
    return false;
  }

  resetStream(): void {
    if (!this.active) return;
    const log = this.owner.log;
    if (log.enabled('debug')) log.debug(`[C${this.connectionId}][S${this.streamId}] stream reset`);
    this.stats.downstream_rq_tx_reset.inc();
    this.owner.factory.http2Stats.tx_reset.inc();
    resetWithInternalError(this.stream);
    this.endStream();
  }

  readDisable(disable: boolean): void {
    if (disable) {
      this.stats.downstream_flow_control_paused_reading_total.inc();
      this.stream.pause();
    } else {
      this.stats.downstream_flow_control_resumed_reading_total.inc();
      this.stream.resume();
    }
  }

  /** The connection closed under the stream. */
  onConnectionClosed(): void {
    if (!this.active) return;
    this.stats.downstream_rq_rx_reset.inc();
    this.router.onDownstreamReset();
    this.endStream();
  }

  // ---- the stream ----------------------------------------------------------------------------

  private readonly onData = (chunk: Buffer): void => {
    if (!this.active) return;
    this.timers.touch();
    if (this.stoppedBy !== null) this.stoppedBy.decodeData(chunk);
    else {
      this.router.decodeData(chunk);
      this.router.onDownstreamReadEnd();
    }
  };

  private readonly onEnd = (): void => {
    if (!this.active) return;
    this.timers.requestComplete();
    if (this.stoppedBy !== null) this.stoppedBy.decodeComplete();
    else this.router.decodeComplete();
  };

  private readonly onDrain = (): void => {
    if (!this.active) return;
    // The client reading the response is progress, as node's own stream timeout counted it.
    this.timers.touch();
    this.router.onDownstreamDrained();
  };

  /** Closed before the response was sent: the client reset the stream (or the connection went). */
  private readonly onClose = (): void => {
    if (!this.active) return;
    this.stats.downstream_rq_rx_reset.inc();
    if (this.stream.rstCode !== undefined && this.stream.rstCode !== 0) this.owner.factory.http2Stats.rx_reset.inc();
    this.router.onDownstreamReset();
    this.endStream();
  };

  onStreamTimeout(body: string): void {
    this.router.onDownstreamReset();
    if (this.responseStarted) this.resetStream();
    else this.sendLocalReply(408, body);
  }

  /** The drain decider, consulted once per response as for HTTP/1: drain means GOAWAY. */
  private maybeDrain(): void {
    if (this.owner.factory.deps.drain.drainClose()) this.owner.startDrain();
  }

  /** The response headers the connection manager sets itself, as for HTTP/1. */
  private addProxyHeaders(headers: http2.OutgoingHttpHeaders): void {
    const factory = this.owner.factory;
    headers['date'] = factory.dates.current();
    headers['server'] = factory.config.serverName;
  }

  private encodeFilterHeaders(status: number, headers: readonly string[]): FilterHeaders {
    const filters = this.filters!;
    const out = new FilterHeaders();
    for (let i = filters.length - 1; i >= 0; i--) filters[i].encodeHeaders(status, headers, out);
    return out;
  }

  private endStream(): void {
    if (!this.active) return;
    this.active = false;
    this.timers.dispose();
    // The rest of a request answered early is read and dropped, so the client's window stays open.
    if (!this.stream.readableEnded) this.stream.resume();
    this.stats.downstream_rq_active.dec();
    this.stats.downstream_rq_time.recordValue(performance.now() - this.startMs);
    this.router.release();
    this.owner.streamEnded(this);
  }
}

/**
 * RST_STREAM INTERNAL_ERROR. Not stream.close(code): it ends the response (END_STREAM) before the
 * reset, so a client would take a response cut short for a whole one. Destroying with an error
 * resets the stream as it stands.
 */
function resetWithInternalError(stream: http2.ServerHttp2Stream): void {
  stream.destroy(new Error('stream reset by the proxy'));
}

function ignoreError(): void {}
