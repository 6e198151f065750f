// The HTTP connection manager of one downstream connection (Envoy's ConnectionManagerImpl), over
// whichever server codec the connection speaks: its streams, its statistics, and the connection
// timeouts (idle_timeout, max_connection_duration) and drain, written once for HTTP/1 and HTTP/2.

import type * as net from 'node:net';
import type { RequestDecoder, ResponseEncoder, ServerConnection, ServerConnectionCallbacks } from '../../../http/codec';
import { Http1ServerConnection } from '../../../http/http1/server_connection';
import { Http2ServerConnection } from '../../../http/http2/server_connection';
import type { Timer } from '../../../common/clock';
import type { TimeoutListMember } from '../../../common/timeout_list';
import type { Logger } from '../../../log/logger_api';
import { downstreamConnectionInfo } from '../../../stream_info/downstream_connection';
import type { DownstreamConnectionInfo } from '../../../stream_info/stream_info';
import type { ActiveStream } from './active_stream';
import type { HttpConnectionManagerFactory } from './factory';

/** The `http` and `connection` loggers taken for this file's lines: once per factory, never per connection. */
export function connectionManagerLogs(http: Logger, connection: Logger): { readonly http: Logger; readonly connection: Logger } {
  return { http: http.forFile(__filename), connection: connection.forFile(__filename) };
}

export class ConnectionManager implements ServerConnectionCallbacks, TimeoutListMember {
  readonly codec: ServerConnection;
  readonly remoteAddress: string;
  /** Streams open now. */
  private activeStreams = 0;
  /** A stream was open when the connection closed. */
  private cutShort = false;
  private closing = false;
  private readonly durationTimer: Timer | null = null;
  // idle_timeout: this connection's place in its factory's list of them.
  timeoutPrev: TimeoutListMember | null = null;
  timeoutNext: TimeoutListMember | null = null;
  timeoutDeadline = -1;
  private downstream: DownstreamConnectionInfo | null = null;

  /** `startMs`: performance.now() when the connection was accepted. */
  constructor(
    readonly factory: HttpConnectionManagerFactory,
    readonly socket: net.Socket,
    private readonly startMs: number,
    readonly connectionId: number,
    http2: boolean,
  ) {
    this.remoteAddress = socket.remoteAddress ?? '';
    const stats = factory.stats;
    stats.downstream_cx_total.inc();
    stats.downstream_cx_active.inc();
    if (http2) {
      stats.downstream_cx_http2_total.inc();
      stats.downstream_cx_http2_active.inc();
      this.codec = new Http2ServerConnection(socket, factory.http2Settings, this);
    } else {
      stats.downstream_cx_http1_total.inc();
      stats.downstream_cx_http1_active.inc();
      this.codec = new Http1ServerConnection(socket, factory.http1Settings, this, connectionId);
    }
    factory.idleTimeouts?.arm(this);
    const maxDuration = factory.config.commonHttpProtocolOptions.maxConnectionDurationMs;
    if (maxDuration > 0) {
      this.durationTimer = factory.clock.createTimer(() => this.onMaxConnectionDuration());
      this.durationTimer.enable(Math.max(0, maxDuration - (performance.now() - startMs)));
    }
  }

  // ---- ServerConnectionCallbacks -----------------------------------------------------------

  newStream(encoder: ResponseEncoder): RequestDecoder {
    const stream = this.factory.takeStream(this);
    this.activeStreams++;
    stream.begin(encoder);
    return stream;
  }

  onProtocolError(details: string): void {
    this.factory.stats.downstream_cx_protocol_error.inc();
    const log = this.factory.connectionLogs.http;
    if (log.enabled('debug')) log.debug(`protocol error from ${this.remoteAddress}: ${details}`);
  }

  onConnectionClosed(local: boolean): void {
    this.factory.connections.delete(this);
    const stats = this.factory.stats;
    stats.downstream_cx_active.dec();
    if (this.codec.protocol === 'http1') stats.downstream_cx_http1_active.dec();
    else stats.downstream_cx_http2_active.dec();
    stats.downstream_cx_destroy.inc();
    stats.downstream_cx_length_ms.recordValue(performance.now() - this.startMs);
    if (local) stats.downstream_cx_destroy_local.inc();
    else stats.downstream_cx_destroy_remote.inc();
    if (this.cutShort) stats.downstream_cx_destroy_active_rq.inc();
    const log = this.factory.connectionLogs.connection;
    if (log.enabled('debug')) {
      if (!local) log.debug(`[C${this.connectionId}] remote close`);
      log.debug(`[C${this.connectionId}] closing socket: ${local ? 1 : 0}`);
    }
    this.factory.idleTimeouts?.disarm(this);
    this.durationTimer?.close();
    this.factory.deps.clusters.releaseDownstream(this.socket);
  }

  // ---- the streams ---------------------------------------------------------------------------

  /** The connection as its streams' StreamInfo sees it; made once, for the first stream that records one. */
  connectionInfo(): DownstreamConnectionInfo {
    return (this.downstream ??= downstreamConnectionInfo(this.socket, this.connectionId));
  }

  streamEnded(stream: ActiveStream): void {
    this.activeStreams--;
    this.factory.releaseStream(stream);
    if (this.activeStreams === 0) this.factory.idleTimeouts?.arm(this);
  }

  /** A stream was open as the connection closed under it. */
  streamCutShort(): void {
    this.cutShort = true;
  }

  /** The drain decider said this response is the connection's last (HTTP/1) or that the connection drains (HTTP/2). */
  shutdownForDrain(): void {
    if (this.codec.shutdown()) this.factory.stats.downstream_cx_drain_close.inc();
  }

  /** disable_http_keepalive is active: this HTTP/1 response is the connection's last. */
  closeForOverload(): void {
    if (this.codec.shutdown()) this.factory.stats.downstream_cx_overload_disable_keepalive.inc();
  }

  // ---- the connection ------------------------------------------------------------------------

  /** Listener drain, hot restart: no new streams; closed once those in flight end. Counted as a drain close. */
  closeIfIdle(): void {
    if (this.codec.protocol === 'http1' && this.activeStreams > 0) return;
    this.shutdownForDrain();
  }

  /** Envoy's idle_timeout: no stream for that long, the connection goes. Public for the AUTO codec's sniffing, which may use it up. */
  onIdleTimeout(): void {
    // A stream in progress arms it again when it ends.
    if (this.activeStreams > 0 || this.closing) return;
    this.closing = true;
    this.factory.stats.downstream_cx_idle_timeout.inc();
    this.codec.close();
  }

  /** max_connection_duration: no new streams; an idle connection closes now, a busy one after its streams. */
  private onMaxConnectionDuration(): void {
    this.factory.stats.downstream_cx_max_duration_reached.inc();
    this.codec.shutdown();
  }
}
