// One HTTP/2 connection to an upstream host (h2c with prior knowledge, or h2 by ALPN over TLS),
// carrying many streams for its pool: the HTTP/2 client codec, on node:http2 (nghttp2). The
// connection and its accounting are an UpstreamConnection's; node:http2 reads and writes the
// socket itself.

import * as http2 from 'node:http2';
import type { Http2ProtocolOptions } from '../config/model';
import type { RequestEncoder, ResponseDecoder, StreamResetReason } from '../http/codec';
import { headersOfList, MalformedHeaders, requestHeadersOf, responseHeadOf, trailersOf } from '../http/http2/header_map';
import type { RequestHead } from '../http/message';
import type { ClusterInfo } from '../upstream/worker/cluster_info';
import type { DownstreamAddresses } from '../network/downstream_addresses';
import type { Logger } from '../log/logger_api';
import { type ConnectFailureReason, type ConnectionTarget, UpstreamConnection, type UpstreamConnectionCallbacks } from './upstream_connection';
import type { Clock, Timer } from '../common/clock';

/** The pool that owns a connection. */
export interface Http2ConnectionOwner {
  onConnectionConnected(connection: Http2ClientConnection): void;
  onConnectionFailure(connection: Http2ClientConnection, reason: ConnectFailureReason): void;
  /** A stream ended, completed or reset: its capacity is free again. */
  onStreamDone(connection: Http2ClientConnection): void;
  /** No new streams on this connection: the peer sent GOAWAY, or it reached max_connection_duration. */
  onGoAway(connection: Http2ClientConnection): void;
  onConnectionClosed(connection: Http2ClientConnection): void;
}

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM, NGHTTP2_NO_ERROR } = http2.constants;

/** UpstreamConnectionLogs' logger for this file's lines, from `client`: taken once per worker, never per connection. */
export function http2ClientLog(client: Logger): Logger {
  return client.forFile(__filename);
}

export class Http2ClientConnection implements UpstreamConnectionCallbacks {
  /** Streams this connection has been given (max_requests_per_connection counts them). */
  streamCount = 0;
  /** Streams open now. */
  activeStreams = 0;
  /** No new streams: GOAWAY received, max_requests_per_connection reached, or the pool drains. */
  draining = false;
  private readonly cluster: ClusterInfo;
  private readonly upstream: UpstreamConnection;
  private session: http2.ClientHttp2Session | null = null;
  /** SETTINGS_MAX_CONCURRENT_STREAMS as the upstream announced it; unbounded until it does. */
  private peerMaxStreams = Number.MAX_SAFE_INTEGER;
  private scheme = 'http';
  /** common_http_protocol_options.idle_timeout, refreshed as the last stream ends. */
  private idleTimer: Timer | null = null;
  private durationTimer: Timer | null = null;
  private readonly clock: Clock;

  constructor(
    target: ConnectionTarget,
    private readonly owner: Http2ConnectionOwner,
    private readonly options: Http2ProtocolOptions,
    /** The downstream connection it was opened for (see ClusterInfo.downstreamSpecificConnections). */
    readonly downstream: DownstreamAddresses,
    /** Its number in log lines. */
    readonly id: number,
  ) {
    this.cluster = target.cluster;
    this.clock = target.clock;
    const log = target.logs.http2Client;
    if (log.enabled('debug')) log.debug(`[C${id}] connecting`);
    this.upstream = new UpstreamConnection(target, this, { allowHalfOpen: false, http1: false, http2: true }, downstream, id);
  }

  /** Streams this connection may still open: max_concurrent_streams, the peer's limit, and max_requests_per_connection. */
  get capacity(): number {
    if (this.draining || this.session === null) return 0;
    let capacity = Math.min(this.options.maxConcurrentStreams, this.peerMaxStreams) - this.activeStreams;
    const max = this.cluster.maxRequestsPerConnection;
    if (max > 0) capacity = Math.min(capacity, max - this.streamCount);
    return Math.max(0, capacity);
  }

  /** Opens a stream whose response goes to `decoder`; its request follows through encodeHeaders. */
  newStream(decoder: ResponseDecoder): RequestEncoder {
    this.streamCount++;
    this.activeStreams++;
    return new Http2UpstreamStream(this, this.session!, this.scheme, decoder, this.cluster);
  }

  /** `ip:port` of our side of the connection. */
  localAddress(): string {
    return this.upstream.localAddress();
  }

  /** No more streams; the connection closes once the last one ends (GOAWAY when it does). */
  drain(): void {
    this.draining = true;
    if (this.activeStreams === 0) this.close();
  }

  close(): void {
    if (this.session !== null && !this.session.destroyed) this.session.close();
    this.upstream.close();
  }

  streamDone(): void {
    this.activeStreams--;
    if (this.activeStreams === 0) this.idleTimer?.enable(this.cluster.idleTimeoutMs);
    this.owner.onStreamDone(this);
  }

  /** A timer that fires while streams are open is ignored, and refreshed when the last one ends. */
  private readonly onIdleTimeout = (): void => {
    if (this.activeStreams > 0 || this.draining) return;
    this.cluster.stats.counters.upstream_cx_idle_timeout.inc();
    this.draining = true;
    this.close();
  };

  /** max_connection_duration: no new streams; the connection closes once those open end. */
  private readonly onMaxDuration = (): void => {
    this.durationTimer = null;
    if (this.draining) return;
    this.cluster.stats.counters.upstream_cx_max_duration_reached.inc();
    this.draining = true;
    // As on GOAWAY: closed now if idle, and requests waiting for room get another connection.
    this.owner.onGoAway(this);
  };

  private clearTimers(): void {
    this.idleTimer?.close();
    this.durationTimer?.close();
    this.idleTimer = this.durationTimer = null;
  }

  // ---- UpstreamConnectionCallbacks -------------------------------------------------------

  onConnected(): void {
    const options = this.options;
    const socket = this.upstream.socket;
    const cluster = this.cluster;
    if (cluster.maxConnectionDurationMs > 0) {
      this.durationTimer = this.clock.createTimer(this.onMaxDuration);
      this.durationTimer.enable(cluster.maxConnectionDurationMs);
    }
    if (cluster.idleTimeoutMs > 0) {
      this.idleTimer = this.clock.createTimer(this.onIdleTimeout);
      this.idleTimer.enable(cluster.idleTimeoutMs);
    }
    // Over TLS (ALPN h2) the stream's :scheme is https.
    this.scheme = 'encrypted' in socket && socket.encrypted === true ? 'https' : 'http';
    const session = http2.connect(`${this.scheme}://${socket.remoteAddress}:${socket.remotePort}`, {
      createConnection: () => socket,
      settings: {
        maxConcurrentStreams: options.maxConcurrentStreams,
        initialWindowSize: options.initialStreamWindowSize,
        headerTableSize: options.hpackTableSize,
        enablePush: false,
      },
      // max_headers_count: nghttp2 resets a stream whose response has more header fields.
      maxHeaderListPairs: cluster.maxResponseHeadersCount,
      // The windows are the bound on what is buffered per stream and connection, as in Envoy.
      maxSessionMemory: Math.max(10, Math.ceil(options.initialConnectionWindowSize / (1024 * 1024)) * 2),
    });
    this.session = session;
    session.on('error', ignoreError);
    session.on('remoteSettings', (settings) => {
      if (settings.maxConcurrentStreams !== undefined) this.peerMaxStreams = settings.maxConcurrentStreams;
    });
    session.on('goaway', () => {
      this.cluster.stats.counters.upstream_cx_close_notify.inc();
      this.draining = true;
      this.owner.onGoAway(this);
    });
    session.once('connect', () => {
      // The connection window is a session setting nghttp2 sends as a WINDOW_UPDATE.
      if (options.initialConnectionWindowSize > 65535) session.setLocalWindowSize(options.initialConnectionWindowSize);
      this.owner.onConnectionConnected(this);
    });
  }

  onConnectFailure(reason: ConnectFailureReason): void {
    this.owner.onConnectionFailure(this, reason);
  }

  /** node:http2 reads the socket: nothing arrives here. */
  onData(): void {}

  onRemoteEnd(): void {}

  onClosed(): void {
    this.clearTimers();
    this.draining = true;
    if (this.session !== null && !this.session.destroyed) this.session.destroy();
    this.owner.onConnectionClosed(this);
  }

  onAboveWriteBufferHighWatermark(): void {}

  onBelowWriteBufferLowWatermark(): void {}
}

/** One request on an HTTP/2 connection (Envoy's ClientStreamImpl): the router's RequestEncoder. */
class Http2UpstreamStream implements RequestEncoder {
  private stream: http2.ClientHttp2Stream | null = null;
  /** The response ended, or the stream was reset by either side: nothing more is reported. */
  private done = false;
  /** The response's trailers, kept until its end. */
  private trailers: string[] | null = null;
  /** The request's trailers once known; the request ends when nghttp2 asks for them (wantTrailers). */
  private requestTrailers: readonly string[] | null = null;
  private requestEnded = false;

  constructor(
    private readonly connection: Http2ClientConnection,
    private readonly session: http2.ClientHttp2Session,
    private readonly scheme: string,
    private readonly decoder: ResponseDecoder,
    private readonly cluster: ClusterInfo,
  ) {}

  encodeHeaders(head: RequestHead, endStream: boolean): void {
    if (this.done) return;
    let stream: http2.ClientHttp2Stream;
    try {
      // A request with a body may end with trailers, which HTTP/2 can only send if asked for at the start.
      stream = this.session.request(requestHeadersOf(head, this.scheme), { endStream, waitForTrailers: !endStream });
    } catch {
      // The session went away between the pool's check and now (GOAWAY, close).
      this.finish();
      this.decoder.onUpstreamReset('connection termination');
      return;
    }
    this.stream = stream;
    stream.on('response', this.onResponse);
    stream.on('trailers', this.onTrailers);
    if (!endStream) stream.on('wantTrailers', this.onWantTrailers);
    stream.on('data', this.onData);
    stream.on('end', this.onEnd);
    stream.on('drain', this.onDrain);
    stream.on('error', ignoreError);
    stream.on('close', this.onClose);
  }

  encodeData(chunk: Buffer, endStream: boolean): boolean {
    const stream = this.stream;
    if (stream === null || this.done) return false;
    const over = chunk.length > 0 && !stream.write(chunk);
    if (endStream) stream.end();
    return over;
  }

  encodeTrailers(trailers: readonly string[]): void {
    if (this.stream === null || this.done) return;
    this.requestTrailers = trailers;
    this.stream.end();
  }

  /** nghttp2 batches frames itself. */
  flush(): boolean {
    return false;
  }

  localAddress(): string {
    return this.connection.localAddress();
  }

  resetStream(): void {
    if (this.done) return;
    this.cluster.stats.counters.upstream_rq_tx_reset.inc();
    if (this.stream !== null) {
      this.cluster.http2Stats.tx_reset.inc();
      this.stream.close(NGHTTP2_CANCEL);
    }
    this.finish();
  }

  readDisable(disable: boolean): void {
    const counters = this.cluster.stats.counters;
    if (disable) {
      counters.upstream_flow_control_paused_reading_total.inc();
      this.stream?.pause();
    } else {
      counters.upstream_flow_control_resumed_reading_total.inc();
      this.stream?.resume();
    }
  }

  private readonly onResponse = (_headers: unknown, flags: number, raw: string[]): void => {
    if (this.done) return;
    const endStream = (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0;
    let head;
    try {
      head = responseHeadOf(raw, endStream);
    } catch (e) {
      if (!(e instanceof MalformedHeaders)) throw e;
      // As Envoy 1.16 with stream_error_on_invalid_http_messaging off (its default): a messaging
      // error fails the whole connection, whose streams end as connection terminations.
      const counters = this.cluster.stats.counters;
      counters.upstream_cx_protocol_error.inc();
      counters.upstream_rq_rx_reset.inc();
      this.cluster.http2Stats.rx_messaging_error.inc();
      this.finish();
      this.connection.close();
      this.decoder.onUpstreamReset('connection termination');
      return;
    }
    this.decoder.onUpstreamHead(head);
    this.decoder.onUpstreamReadEnd();
  };

  /** Without trailers node:http2 ends the request with an empty DATA frame. */
  private readonly onWantTrailers = (): void => {
    if (this.requestEnded || this.stream === null || this.stream.destroyed) return;
    this.requestEnded = true;
    this.stream.sendTrailers(this.requestTrailers === null ? {} : headersOfList(this.requestTrailers));
  };

  private readonly onTrailers = (_headers: unknown, _flags: number, raw: string[]): void => {
    if (!this.done) this.trailers = trailersOf(raw);
  };

  private readonly onData = (chunk: Buffer): void => {
    if (this.done) return;
    this.decoder.onUpstreamBody(chunk);
    this.decoder.onUpstreamReadEnd();
  };

  private readonly onEnd = (): void => {
    if (this.done) return;
    this.finish();
    this.decoder.onUpstreamComplete(this.trailers);
  };

  private readonly onDrain = (): void => {
    if (!this.done) this.decoder.onUpstreamDrained();
  };

  private readonly onClose = (): void => {
    if (this.done) return;
    // Closed before the response ended: the upstream reset it, or the connection went away.
    const code = this.stream!.rstCode;
    const counters = this.cluster.stats.counters;
    let reason: StreamResetReason;
    if (code === NGHTTP2_REFUSED_STREAM) reason = 'remote refused stream reset';
    else if (code !== undefined && code !== NGHTTP2_NO_ERROR && !this.session.destroyed) reason = 'remote reset';
    else reason = 'connection termination';
    if (reason !== 'connection termination') this.cluster.http2Stats.rx_reset.inc();
    counters.upstream_rq_rx_reset.inc();
    this.finish();
    this.decoder.onUpstreamReset(reason);
  };

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.connection.streamDone();
  }
}

function ignoreError(): void {}
