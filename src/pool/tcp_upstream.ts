// The router's upstream for a CONNECT request this proxy terminates (Envoy's TcpConnPool and
// TcpUpstream, chosen by a route's connect_config): one TCP connection to the host for the one
// request. The request's head stays here and its body goes up as raw bytes; once the connection
// is up the router hears a 200, and what the host sends is the response's body, which ends when
// the host half-closes. The connection counts against the cluster's max_connections.

import type { PoolCallbacks, RequestEncoder, ResponseDecoder, UpstreamStreamSource } from '../http/codec';
import { BODY_UNTIL_CLOSE, type RequestHead, ResponseHead } from '../http/message';
import type { DownstreamAddresses } from '../network/downstream_addresses';
import type { RoutingPriority } from '../config/model';
import type { HostStats } from '../stats/stats';
import type { ResourceManager } from '../upstream/shared/resource_manager';
import type { Cluster } from '../upstream/worker/cluster';
import type { Host } from '../upstream/worker/host';
import type { UpstreamConnection, UpstreamConnectionCallbacks } from './upstream_connection';

export class TcpUpstream implements UpstreamStreamSource, RequestEncoder, UpstreamConnectionCallbacks {
  readonly hostStats: HostStats;
  private connection: UpstreamConnection | null = null;
  private decoder: ResponseDecoder | null = null;
  /** Waiting for the connection; null once it is up, failed or withdrawn. */
  private waiting: PoolCallbacks | null = null;
  /** The response ended or the stream was reset: the decoder hears nothing more. */
  private done = false;
  /** The circuit breakers the open connection holds one of max_connections from; null once given back. */
  private resources: ResourceManager | null = null;

  /** @param cluster the cluster that owns `host` (an aggregate's child for a host it picked) */
  constructor(
    private readonly cluster: Cluster,
    private readonly host: Host,
    private readonly priority: RoutingPriority,
  ) {
    this.hostStats = cluster.hostStats(host);
  }

  newStream(decoder: ResponseDecoder, callbacks: PoolCallbacks, downstream: DownstreamAddresses): void {
    this.decoder = decoder;
    const resources = this.cluster.info.resourceManager(this.priority);
    if (!resources.connections.tryAcquire()) {
      this.cluster.info.stats.counters.upstream_cx_overflow.inc();
      this.done = true;
      callbacks.onPoolFailure('overflow');
      return;
    }
    this.resources = resources;
    this.waiting = callbacks;
    this.connection = this.cluster.tcpConnection(this.host, this, downstream);
  }

  cancel(): void {
    this.waiting = null;
    this.done = true;
    this.connection?.close();
    this.releaseConnection();
  }

  // ---- the connection ------------------------------------------------------------------------

  onConnected(): void {
    const callbacks = this.waiting;
    this.waiting = null;
    callbacks?.onPoolReady(this, this.hostStats);
  }

  onConnectFailure(): void {
    const callbacks = this.waiting;
    this.waiting = null;
    this.done = true;
    this.releaseConnection();
    callbacks?.onPoolFailure('connection failure');
  }

  onData(chunk: Buffer): void {
    if (this.done) return;
    this.decoder!.onUpstreamBody(chunk);
    this.decoder!.onUpstreamReadEnd();
  }

  onRemoteEnd(): void {
    if (this.done) return;
    this.done = true;
    this.decoder!.onUpstreamComplete(null);
    this.decoder!.onUpstreamReadEnd();
  }

  onClosed(): void {
    this.releaseConnection();
    if (this.done) return;
    this.done = true;
    this.decoder!.onUpstreamReset('connection termination');
  }

  /** encodeData's result already told the router to hold the request back. */
  onAboveWriteBufferHighWatermark(): void {}

  onBelowWriteBufferLowWatermark(): void {
    if (!this.done) this.decoder!.onUpstreamDrained();
  }

  // ---- RequestEncoder ------------------------------------------------------------------------

  /** The head is not sent: the tunnel is open, which the router hears once it has finished with the head. */
  encodeHeaders(_head: RequestHead, endStream: boolean): void {
    if (endStream) this.connection!.end();
    queueMicrotask(this.announceTunnel);
  }

  encodeData(chunk: Buffer, endStream: boolean): boolean {
    const connection = this.connection!;
    const over = chunk.length > 0 && connection.output.write(chunk);
    if (endStream) connection.end();
    return over;
  }

  /** CONNECT's payload has no trailers: they end it. */
  encodeTrailers(): void {
    this.connection!.end();
  }

  flush(): boolean {
    return false;
  }

  resetStream(): void {
    this.done = true;
    this.connection!.close();
  }

  readDisable(disable: boolean): void {
    const socket = this.connection!.socket;
    if (disable) socket.pause();
    else socket.resume();
  }

  localAddress(): string {
    return this.connection!.localAddress();
  }

  private releaseConnection(): void {
    this.resources?.connections.release();
    this.resources = null;
  }

  private readonly announceTunnel = (): void => {
    if (this.done) return;
    const head = new ResponseHead(200, false);
    head.bodyLength = BODY_UNTIL_CLOSE;
    head.mayEndWithTrailers = false;
    this.decoder!.onUpstreamHead(head);
    this.decoder!.onUpstreamReadEnd();
  };
}
