// The tcp_proxy network filter: each downstream connection gets one upstream connection to a
// host of the cluster, and bytes flow both ways with Envoy's watermarks (a side whose peer's
// write buffer went over its buffer limit stops being read until that buffer is down to half),
// half-closes pass through, and the pair closes after idle_timeout without traffic. When the
// downstream connection closes, its access logs are told of it (StreamInfo, no heads), as
// Envoy's filter does when it is destroyed. Once both connections are up, the bytes move in the
// addon (SocketRelay) while nothing but bytes happens; the first end of stream or error hands
// the connections back to the JavaScript here.

import type * as net from 'node:net';
import type { AccessLog } from '../../access_log/access_log';
import { downstreamConnectionInfo, socketAddressString } from '../../stream_info/downstream_connection';
import { ResponseFlag } from '../../stream_info/response_flags';
import { StreamInfo } from '../../stream_info/stream_info';
import type { TcpProxyConfig } from '../../config/model';
import type { NetworkFilterFactory } from '../../listener/network_filter';
import { RelaySide, SocketRelay } from '../../network/socket_relay';
import { type WatermarkCallbacks, WatermarkWriter } from '../../network/watermark_writer';
import type { UpstreamConnection, UpstreamConnectionCallbacks } from '../../pool/upstream_connection';
import type { HostStats, StatsStore } from '../../stats/stats';
import type { Cluster } from '../../upstream/worker/cluster';
import type { ClusterInfo } from '../../upstream/worker/cluster_info';
import type { ClusterManager } from '../../upstream/worker/cluster_manager';
import type { ClusterStats } from '../../upstream/worker/cluster_stats';
import type { Host } from '../../upstream/worker/host';
import { connectionContext } from '../../upstream/worker/lb/load_balancer';
import { OutlierResult } from '../../upstream/worker/outlier/host_monitor';
import type { ResourceManager } from '../../upstream/shared/resource_manager';
import { TcpProxyStats } from './tcp_proxy_stats';
import type { Clock, Timer } from '../../common/clock';

export interface TcpProxyDeps {
  readonly stats: StatsStore;
  readonly clusters: ClusterManager;
  /** The listener's per_connection_buffer_limit_bytes. */
  readonly bufferLimitBytes: number;
  /** The filter's access logs (createAccessLogs), in this process. */
  readonly accessLogs: readonly AccessLog[];
  /** Times idle_timeout. */
  readonly clock: Clock;
}

export class TcpProxyFactory implements NetworkFilterFactory {
  readonly stats: TcpProxyStats;

  constructor(
    readonly config: TcpProxyConfig,
    readonly deps: TcpProxyDeps,
  ) {
    this.stats = new TcpProxyStats(deps.stats.scope(`tcp.${config.statPrefix}`));
  }

  /** A TCP stream has no request boundaries: it runs on until the parent epoch terminates. */
  closeIdleConnections(): void {}

  onNewConnection(socket: net.Socket, id: number): void {
    new TcpProxySession(this, socket, id);
  }
}

class TcpProxySession implements UpstreamConnectionCallbacks, WatermarkCallbacks {
  private readonly stats: TcpProxyStats;
  private readonly output: WatermarkWriter;
  private upstream: UpstreamConnection | null = null;
  private clusterInfo: ClusterInfo | null = null;
  private clusterStats: ClusterStats | null = null;
  private hostStats: HostStats | null = null;
  private host: Host | null = null;
  /** The cluster's circuit breakers (tcp_proxy uses the DEFAULT priority, as Envoy's does). */
  private resources: ResourceManager | null = null;
  /** The connection counts as a request of its cluster and host while it is up (Envoy's TCP pool). */
  private requestActive = false;
  private upstreamClosed = false;
  private lastActivity = 0;
  private idleTimer: Timer | null = null;
  private flushing = false;
  /** What the access logs print; null when the filter has none, which then costs nothing. */
  private readonly info: StreamInfo | null;
  /** Moves the bytes while both connections are up and nothing else happens; null: JavaScript does. */
  private relay: SocketRelay | null = null;

  constructor(
    private readonly factory: TcpProxyFactory,
    private readonly downstream: net.Socket,
    id: number,
  ) {
    const stats = (this.stats = factory.stats);
    this.info = factory.deps.accessLogs.length === 0 ? null : new StreamInfo(downstreamConnectionInfo(downstream, id), factory.deps.clock);
    this.info?.start();
    stats.downstream_cx_total.inc();
    this.output = new WatermarkWriter(
      downstream,
      factory.deps.bufferLimitBytes,
      { written: stats.downstream_cx_tx_bytes_total, buffered: stats.downstream_cx_tx_bytes_buffered },
      this,
    );
    downstream.allowHalfOpen = true;
    // Nothing is read until the upstream connection is up.
    downstream.pause();
    downstream.on('data', this.onDownstreamData);
    downstream.on('end', this.onDownstreamEnd);
    downstream.on('error', ignoreError);
    downstream.on('close', this.onDownstreamClose);

    const cluster = factory.deps.clusters.get(factory.config.cluster);
    if (cluster === undefined) {
      stats.downstream_cx_no_route.inc();
      this.info?.setResponseFlag(ResponseFlag.NoRouteFound);
      downstream.destroy();
      return;
    }
    if (this.info !== null) this.info.upstreamCluster = factory.config.cluster;
    const chosen = cluster.chooseHost(connectionContext(downstream));
    if (chosen === null) {
      cluster.info.stats.counters.upstream_cx_none_healthy.inc();
      this.info?.setResponseFlag(ResponseFlag.NoHealthyUpstream);
      downstream.destroy();
      return;
    }
    this.connect(cluster.hostCluster(chosen), chosen, downstream);
  }

  /**
   * Opens the connection to `host` of `cluster`: an aggregate's child for a host the aggregate
   * picked, whose circuit breakers and statistics count it, as its TCP pool does in Envoy.
   */
  private connect(cluster: Cluster, host: Host, downstream: net.Socket): void {
    this.clusterInfo = cluster.info;
    const clusterStats = (this.clusterStats = cluster.info.stats);
    // Envoy's tcp_proxy checks max_connections itself, then its TCP pool max_pending_requests;
    // a connection refused either way closes the downstream connection.
    const resources = cluster.info.resourceManager('DEFAULT');
    // Envoy names the host of a connection that fails as well.
    if (this.info !== null) this.info.upstreamHost = host.addressString;
    if (!resources.connections.tryAcquire()) {
      clusterStats.counters.upstream_cx_overflow.inc();
      this.info?.setResponseFlag(ResponseFlag.UpstreamOverflow);
      downstream.destroy();
      return;
    }
    if (!resources.pendingRequests.tryAcquire()) {
      resources.connections.release();
      clusterStats.counters.upstream_rq_pending_overflow.inc();
      this.info?.setResponseFlag(ResponseFlag.UpstreamOverflow);
      downstream.destroy();
      return;
    }
    this.resources = resources;
    this.hostStats = cluster.hostStats(host);
    this.host = host;
    // Waiting for its connection, the session is a pending request, as in Envoy's TCP pool.
    clusterStats.counters.upstream_rq_pending_total.inc();
    clusterStats.gauges.upstream_rq_pending_active.inc();
    this.upstream = cluster.tcpConnection(host, this, downstream);
  }

  /** The session no longer waits for its connection. */
  private leavePending(): void {
    this.clusterStats!.gauges.upstream_rq_pending_active.dec();
    this.resources!.pendingRequests.release();
  }

  // ---- upstream ----------------------------------------------------------------------------

  onConnected(): void {
    const clusterStats = this.clusterStats!;
    this.leavePending();
    // Envoy's TCP pool gives the connection to the session only if max_requests allows.
    if (!this.resources!.requests.tryAcquire()) {
      clusterStats.counters.upstream_rq_pending_overflow.inc();
      this.info?.setResponseFlag(ResponseFlag.UpstreamOverflow);
      this.upstream!.close();
      this.downstream.destroy();
      return;
    }
    // Counted in rq_active like an HTTP request, least request balances connections.
    clusterStats.counters.upstream_rq_total.inc();
    clusterStats.gauges.upstream_rq_active.inc();
    this.hostStats!.rq_total.inc();
    this.hostStats!.rq_active.inc();
    this.requestActive = true;
    this.host!.outlier.putResult(OutlierResult.LocalOriginConnectSuccessFinal);
    if (this.info !== null) {
      const socket = this.upstream!.socket;
      this.info.upstreamLocalAddress = socketAddressString(socket.localAddress, socket.localPort);
    }
    if (!this.startRelay()) this.downstream.resume();
    const idleTimeout = this.factory.config.idleTimeoutMs;
    if (idleTimeout > 0) {
      this.lastActivity = Date.now();
      this.idleTimer = this.factory.deps.clock.createTimer(this.onIdleCheck);
      this.idleTimer.enable(idleTimeout);
    }
  }

  /**
   * Hands the bytes to the addon when both connections allow it (SocketRelay.start) and every
   * upstream read need not be traced; true when it took them.
   */
  private startRelay(): boolean {
    const upstream = this.upstream!;
    if (!upstream.readsUntraced) return false;
    const stats = this.stats;
    const cluster = this.clusterInfo!;
    const { counters, gauges } = cluster.stats;
    this.relay = SocketRelay.start(
      this.downstream,
      upstream.socket,
      [
        {
          limit: cluster.perConnectionBufferLimitBytes,
          rx: stats.downstream_cx_rx_bytes_total,
          tx: counters.upstream_cx_tx_bytes_total,
          buffered: gauges.upstream_cx_tx_bytes_buffered,
          paused: stats.downstream_flow_control_paused_reading_total,
          resumed: stats.downstream_flow_control_resumed_reading_total,
        },
        {
          limit: this.factory.deps.bufferLimitBytes,
          rx: counters.upstream_cx_rx_bytes_total,
          tx: stats.downstream_cx_tx_bytes_total,
          buffered: stats.downstream_cx_tx_bytes_buffered,
          paused: counters.upstream_flow_control_paused_reading_total,
          resumed: counters.upstream_flow_control_resumed_reading_total,
        },
      ],
      this.onRelayStop,
    );
    return this.relay !== null;
  }

  /** A side's stream ended or failed: the JavaScript path takes over and meets it as Node reports it. */
  private readonly onRelayStop = (side: RelaySide, errno: number): void => {
    // Node would have destroyed a socket whose read or write failed; an end it reads itself.
    if (errno !== 0) (side === RelaySide.Downstream ? this.downstream : this.upstream!.socket).destroy();
    this.endRelay();
  };

  /**
   * Back to JavaScript, if relayed: both sides are read here again, what the relay read and had
   * not written goes through the writers, and the access log gets the relayed byte counts.
   */
  private endRelay(): void {
    const relay = this.relay;
    if (relay === null) return;
    this.relay = null;
    const { fromDownstream, fromUpstream } = relay.close();
    this.lastActivity = Math.max(this.lastActivity, relay.lastActivity);
    if (this.info !== null) {
      this.info.bytesReceived += relay.bytesRead(RelaySide.Downstream);
      this.info.bytesSent += relay.bytesRead(RelaySide.Upstream);
    }
    const upstream = this.upstream!;
    const downstream = this.downstream;
    // Resumed first: a write below that goes over its limit pauses its source again.
    if (!downstream.destroyed) downstream.resume();
    if (!upstream.socket.destroyed) upstream.socket.resume();
    if (fromDownstream.length > 0 && !upstream.socket.destroyed) upstream.output.write(fromDownstream);
    if (fromUpstream.length > 0 && !downstream.destroyed) this.output.write(fromUpstream);
  }

  onConnectFailure(): void {
    this.leavePending();
    this.resources!.connections.release();
    this.host!.outlier.putResult(OutlierResult.LocalOriginConnectFailed);
    this.info?.setResponseFlag(ResponseFlag.UpstreamConnectionFailure);
    this.upstreamClosed = true;
    this.downstream.destroy();
  }

  onData(chunk: Buffer): void {
    this.lastActivity = Date.now();
    if (this.info !== null) this.info.bytesSent += chunk.length;
    this.output.write(chunk);
  }

  onRemoteEnd(): void {
    if (!this.downstream.destroyed) this.downstream.end();
  }

  onClosed(): void {
    this.endRelay();
    this.upstreamClosed = true;
    this.resources!.connections.release();
    if (this.requestActive) {
      this.requestActive = false;
      this.clusterStats!.gauges.upstream_rq_active.dec();
      this.hostStats!.rq_active.dec();
      this.resources!.requests.release();
    }
    if (this.flushing) {
      this.flushing = false;
      this.stats.upstream_flush_active.dec();
    }
    this.clearIdleTimer();
    // Whatever the upstream sent still reaches the client, then the client is closed.
    const downstream = this.downstream;
    if (downstream.destroyed) return;
    if (downstream.writableFinished) {
      downstream.destroy();
      return;
    }
    downstream.end();
    downstream.once('finish', this.destroyDownstream);
  }

  // ---- downstream --------------------------------------------------------------------------

  private readonly onDownstreamData = (chunk: Buffer): void => {
    this.lastActivity = Date.now();
    this.stats.downstream_cx_rx_bytes_total.add(chunk.length);
    if (this.info !== null) this.info.bytesReceived += chunk.length;
    this.upstream!.output.write(chunk);
  };

  private readonly onDownstreamEnd = (): void => {
    if (this.upstream !== null && !this.upstreamClosed) this.upstream.end();
  };

  private readonly onDownstreamClose = (): void => {
    this.endRelay();
    this.output.release();
    this.logAccess();
    const upstream = this.upstream;
    if (upstream === null || this.upstreamClosed) return;
    if (!upstream.isConnected || upstream.socket.writableFinished) {
      this.clearIdleTimer();
      upstream.close();
      return;
    }
    // Data the client sent before leaving still goes up, then the upstream closes too; the
    // idle timeout bounds a flush the upstream never reads.
    if (upstream.socket.writableLength > 0) {
      this.flushing = true;
      this.stats.upstream_flush_total.inc();
      this.stats.upstream_flush_active.inc();
    }
    upstream.end();
    upstream.socket.once('finish', () => upstream.close());
  };

  /** The connection is over for the client: every access log gets its line. */
  private logAccess(): void {
    const info = this.info;
    if (info === null) return;
    info.requestComplete = info.sinceStart();
    for (const log of this.factory.deps.accessLogs) log.log(null, null, null, info);
  }

  // ---- watermarks: each side's write buffer holds back the other side's reading ------------

  onAboveWriteBufferHighWatermark(): void {
    this.stats.downstream_flow_control_paused_reading_total.inc();
    this.downstream.pause();
  }

  onBelowWriteBufferLowWatermark(): void {
    this.stats.downstream_flow_control_resumed_reading_total.inc();
    this.downstream.resume();
  }

  onAboveHighWatermark(): void {
    this.clusterStats!.counters.upstream_flow_control_paused_reading_total.inc();
    this.upstream!.socket.pause();
  }

  onBelowLowWatermark(): void {
    this.clusterStats!.counters.upstream_flow_control_resumed_reading_total.inc();
    this.upstream!.socket.resume();
  }

  private readonly destroyDownstream = (): void => {
    this.downstream.destroy();
  };

  // ---- idle timeout ---------------------------------------------------------------------------

  /** Fires every idle_timeout; activity only moves a timestamp, so data costs no timer work. */
  private readonly onIdleCheck = (): void => {
    const timeout = this.factory.config.idleTimeoutMs;
    const last = this.relay === null ? this.lastActivity : Math.max(this.lastActivity, this.relay.lastActivity);
    const idle = Date.now() - last;
    if (idle < timeout) {
      this.idleTimer!.enable(timeout - idle);
      return;
    }
    this.stats.idle_timeout.inc();
    this.endRelay();
    this.upstream?.close();
    this.downstream.destroy();
  };

  private clearIdleTimer(): void {
    this.idleTimer?.close();
    this.idleTimer = null;
  }
}

function ignoreError(): void {}
