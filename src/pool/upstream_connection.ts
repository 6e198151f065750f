// One TCP connection to an upstream host, with Envoy's connection accounting: the cluster's
// upstream_cx_* and the host's cx_* statistics, and the cluster's connect_timeout. The HTTP/1 and
// HTTP/2 pools and tcp_proxy build on it.

import type * as net from 'node:net';
import type { TcpKeepalive } from '../config/model';
import type { UpstreamConnectionLogs } from '../log/connection_log';
import type { Logger } from '../log/logger_api';
import { NativeError, setTcpKeepalive } from '../native/addon';
import type { Connector, TransportSocketOptions } from '../network/connector';
import { WatermarkWriter } from '../network/watermark_writer';
import { socketFd } from '../network/socket_fd';
import type { HostStats } from '../stats/stats';
import type { ClusterInfo } from '../upstream/worker/cluster_info';
import type { Host } from '../upstream/worker/host';
import type { DownstreamAddresses } from '../network/downstream_addresses';
import { socketAddressString } from '../stream_info/downstream_connection';
import type { Clock, Timer } from '../common/clock';
import type { WriteBatch } from '../network/write_batch';

export type ConnectFailureReason = 'timeout' | 'refused';

/** Where a connection goes and what it is accounted to. */
export interface ConnectionTarget {
  readonly host: Host;
  readonly hostStats: HostStats;
  readonly cluster: ClusterInfo;
  /**
   * Scratch space the socket reads into (net.Socket's `onread`); each read is copied out at
   * once, so one buffer serves every upstream socket of the worker.
   */
  readonly readBuffer: Buffer;
  /** Opens the connection: plaintext or TLS, as the host's transport socket says. */
  readonly connector: Connector;
  /** What the requests of this target ask of the transport socket (auto_sni); none: nothing. */
  readonly transportSocketOptions?: TransportSocketOptions;
  /** The worker's upstream connection loggers and ids. */
  readonly logs: UpstreamConnectionLogs;
  /** Times the connection: connect_timeout here, idle_timeout and max_connection_duration in the codecs. */
  readonly clock: Clock;
  /** Where the connection's small writes wait for the end of the event loop's turn; null: they go at once. */
  readonly writeBatch: WriteBatch | null;
}

export interface UpstreamConnectionCallbacks {
  onConnected(): void;
  /** The connection was never established; nothing else will be called. */
  onConnectFailure(reason: ConnectFailureReason): void;
  onData(chunk: Buffer): void;
  /** The upstream half-closed (sent FIN). */
  onRemoteEnd(): void;
  /** An established connection closed, by either side. */
  onClosed(remote: boolean): void;
  /** The write buffer went over the cluster's buffer limit: stop feeding it. */
  onAboveWriteBufferHighWatermark(): void;
  /** It drained to half the limit: feed it again. */
  onBelowWriteBufferLowWatermark(): void;
}

export interface UpstreamConnectionOptions {
  /** Keep writing after the upstream half-closes (tcp_proxy); HTTP/1 closes instead. */
  readonly allowHalfOpen: boolean;
  readonly http1: boolean;
  /** node:http2 reads the socket itself: no `onread` fast path, and onData is never called. */
  readonly http2?: boolean;
}

const H2_ALPN: readonly string[] = ['h2'];

/** UpstreamConnectionLogs' logger for this file's lines, from `connection`: taken once per worker, never per connection. */
export function upstreamConnectionLog(connection: Logger): Logger {
  return connection.forFile(__filename);
}

export class UpstreamConnection {
  readonly socket: net.Socket;
  /** `connection`. */
  private readonly log: Logger;
  private readonly writer: WatermarkWriter;
  private connected = false;
  private timedOut = false;
  private closedLocally = false;
  private remoteEnded = false;
  private connectTimer: Timer | null = null;
  /** localAddress() once known: it is fixed for the connection's life. */
  private local: string | null = null;
  /** performance.now() at creation: upstream_cx_connect_ms and upstream_cx_length_ms run from it. */
  private readonly startMs = performance.now();

  private readonly cluster: ClusterInfo;
  private readonly hostStats: HostStats;
  private readonly readBuffer: Buffer;

  /**
   * `downstream`: the connection this one serves, for the transport socket (a PROXY protocol
   * header); `id`: its number in log lines, from `target.logs.ids`.
   */
  constructor(
    target: ConnectionTarget,
    private readonly callbacks: UpstreamConnectionCallbacks,
    options: UpstreamConnectionOptions,
    downstream: DownstreamAddresses,
    readonly id: number,
  ) {
    const { host, hostStats, cluster } = target;
    this.log = target.logs.connection;
    if (this.log.enabled('debug')) this.log.debug(`[C${id}] connecting to ${host.ip}:${host.port}`);
    this.cluster = cluster;
    this.hostStats = hostStats;
    this.readBuffer = target.readBuffer;
    const stats = cluster.stats;
    stats.counters.upstream_cx_total.inc();
    stats.gauges.upstream_cx_active.inc();
    if (options.http1) stats.counters.upstream_cx_http1_total.inc();
    if (options.http2 === true) stats.counters.upstream_cx_http2_total.inc();
    hostStats.cx_total.inc();
    hostStats.cx_active.inc();

    // Reading through `onread` skips the stream machinery and its 64 KiB allocation per read;
    // node:http2 reads an HTTP/2 connection's socket itself.
    const connector = target.connector;
    const reads = options.http2 !== true;
    this.socket = connector.connect({
      host: host.ip,
      port: host.port,
      allowHalfOpen: options.allowHalfOpen,
      localAddress: cluster.sourceAddress,
      localPort: cluster.sourcePort,
      transportSocketOptions: target.transportSocketOptions,
      downstream,
      onread: reads && connector.supportsOnread ? { buffer: target.readBuffer, callback: this.onSocketRead } : undefined,
      // An HTTP/2 pool must get h2 from ALPN, whatever the context offers (Envoy's override).
      alpn: options.http2 === true ? H2_ALPN : undefined,
    });
    if (reads && !connector.supportsOnread) this.socket.on('data', this.onSocketData);
    this.writer = new WatermarkWriter(
      this.socket,
      cluster.perConnectionBufferLimitBytes,
      { written: stats.counters.upstream_cx_tx_bytes_total, buffered: stats.gauges.upstream_cx_tx_bytes_buffered },
      { onAboveHighWatermark: () => callbacks.onAboveWriteBufferHighWatermark(), onBelowLowWatermark: () => callbacks.onBelowWriteBufferLowWatermark() },
      // HTTP/1 requests are written here, in small pieces; tcp_proxy's bytes go at once (its row,
      // not CPU-bound, measured no gain, and its flush-on-close accounting reads writableLength).
      options.http1 ? target.writeBatch : null,
    );
    this.socket.on(connector.readyEvent, this.onSocketConnect);
    this.socket.on('end', this.onSocketEnd);
    this.socket.on('error', ignoreError);
    this.socket.on('close', this.onSocketClose);
    if (cluster.connectTimeoutMs > 0) {
      this.connectTimer = target.clock.createTimer(this.onConnectTimeout);
      this.connectTimer.enable(cluster.connectTimeoutMs);
    }
  }

  get isConnected(): boolean {
    return this.connected;
  }

  /**
   * Writes to the upstream, within the cluster's per_connection_buffer_limit_bytes: upstream_cx_tx_bytes_*
   * are counted and the callbacks hear the watermarks (see WatermarkWriter).
   */
  get output(): WatermarkWriter {
    return this.writer;
  }

  /** Whether its reads may go elsewhere (tcp_proxy's relay): not while each is traced. */
  get readsUntraced(): boolean {
    return !this.log.enabled('trace');
  }

  /** Closes at once, discarding unsent data. */
  close(): void {
    if (this.socket.destroyed) return;
    this.closedLocally = true;
    this.socket.destroy();
  }

  /** Half-closes after the buffered data is sent. */
  end(): void {
    this.writer.end();
  }

  private readonly onSocketConnect = (): void => {
    this.clearConnectTimer();
    // As in Envoy, a socket whose options cannot be applied is not used: it fails like a connect.
    if (this.cluster.tcpKeepalive !== null && !this.applyKeepalive(this.cluster.tcpKeepalive)) {
      this.close();
      return;
    }
    this.connected = true;
    if (this.log.enabled('debug')) this.log.debug(`[C${this.id}] connected`);
    this.cluster.stats.histograms.upstream_cx_connect_ms.recordValue(performance.now() - this.startMs);
    this.callbacks.onConnected();
  };

  /** 0 leaves a knob at the system default, as an unset field does in Envoy. */
  private applyKeepalive(keepalive: TcpKeepalive): boolean {
    const fd = socketFd(this.socket);
    if (fd === null) return false;
    try {
      setTcpKeepalive(fd, keepalive.probes ?? 0, keepalive.timeS ?? 0, keepalive.intervalS ?? 0);
      return true;
    } catch (error) {
      if (error instanceof NativeError) return false;
      throw error;
    }
  }

  /** `ip:port` of our side, for the access logs' UPSTREAM_LOCAL_ADDRESS; asked per request, made once. */
  localAddress(): string {
    return (this.local ??= socketAddressString(this.socket.localAddress, this.socket.localPort));
  }

  /** Node's `onread` callback: `length` bytes are in the read buffer; true keeps reading. */
  private readonly onSocketRead = (length: number): boolean => {
    this.cluster.stats.counters.upstream_cx_rx_bytes_total.add(length);
    if (this.log.enabled('trace')) this.log.trace(`[C${this.id}] read returns: ${length}`);
    // The bytes leave the shared buffer before the next read can overwrite it.
    const chunk = Buffer.allocUnsafe(length);
    this.readBuffer.copy(chunk, 0, 0, length);
    this.callbacks.onData(chunk);
    return true;
  };

  private readonly onSocketData = (chunk: Buffer): void => {
    this.cluster.stats.counters.upstream_cx_rx_bytes_total.add(chunk.length);
    if (this.log.enabled('trace')) this.log.trace(`[C${this.id}] read returns: ${chunk.length}`);
    this.callbacks.onData(chunk);
  };

  private readonly onSocketEnd = (): void => {
    this.remoteEnded = true;
    this.callbacks.onRemoteEnd();
  };

  private readonly onConnectTimeout = (): void => {
    this.timedOut = true;
    this.cluster.stats.counters.upstream_cx_connect_timeout.inc();
    this.close();
  };

  private readonly onSocketClose = (): void => {
    this.clearConnectTimer();
    this.writer.release();
    const stats = this.cluster.stats;
    // The peer closed first if it sent FIN or if we never closed. A failed connect is remote
    // unless we gave up on it (Envoy's RemoteClose for a refused connection, LocalClose for a
    // connect timeout).
    const remote = this.remoteEnded || !this.closedLocally;
    if (this.log.enabled('debug')) {
      if (remote) this.log.debug(`[C${this.id}] remote close`);
      this.log.debug(`[C${this.id}] closing socket: ${remote ? 0 : 1}`);
    }
    stats.gauges.upstream_cx_active.dec();
    // As Envoy's conn_length_: every connection, failed connects included.
    stats.histograms.upstream_cx_length_ms.recordValue(performance.now() - this.startMs);
    this.hostStats.cx_active.dec();
    stats.counters.upstream_cx_destroy.inc();
    if (remote) stats.counters.upstream_cx_destroy_remote.inc();
    else stats.counters.upstream_cx_destroy_local.inc();
    if (!this.connected) {
      stats.counters.upstream_cx_connect_fail.inc();
      this.hostStats.cx_connect_fail.inc();
      this.callbacks.onConnectFailure(this.timedOut ? 'timeout' : 'refused');
      return;
    }
    this.callbacks.onClosed(remote);
  };

  private clearConnectTimer(): void {
    if (this.connectTimer !== null) {
      this.connectTimer.close();
      this.connectTimer = null;
    }
  }
}

/** Errors always end in 'close', where they are accounted for. */
function ignoreError(): void {}
