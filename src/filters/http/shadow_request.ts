// A mirrored request (Envoy 1.16's ShadowWriter and the async client under it): once the
// downstream request is complete, a copy of it goes to the mirror cluster, `-shadow` appended to
// its host. Fire and forget: nothing waits for it and its response is read and dropped, but it
// counts in the mirror cluster's statistics and outlier detection as any request does.

import type { Clock, TimeoutHandle } from '../../common/clock';
import type { ConnectionPool, PoolCallbacks, RequestEncoder, ResponseDecoder, StreamResetReason } from '../../http/codec';
import { RequestHead, type ResponseHead } from '../../http/message';
import type { DownstreamAddresses } from '../../network/downstream_addresses';
import type { HostStats } from '../../stats/stats';
import type { Cluster } from '../../upstream/worker/cluster';
import type { Host } from '../../upstream/worker/host';
import { connectionContext } from '../../upstream/worker/lb/load_balancer';
import { OutlierResult } from '../../upstream/worker/outlier/host_monitor';

/** Envoy's async client marks what it sends as internal (x-envoy-internal). */
const INTERNAL_HEADER = 'x-proxy-internal';

export interface ShadowOptions {
  /** The route's timeout: the mirror gives up on its response after it; 0: never. */
  readonly timeoutMs: number;
  readonly clock: Clock;
  /** The server's local address, which the async client appends to x-forwarded-for; undefined: none. */
  readonly localAddress: string | undefined;
}

/** `host:port` -> `host-shadow:port`; `host` -> `host-shadow`. */
export function shadowAuthority(authority: string): string {
  const colon = authority.indexOf(':');
  // Envoy splits at ':' and keeps two parts at most: an IPv6 literal gets the suffix at its end.
  if (colon < 0 || authority.indexOf(':', colon + 1) >= 0) return `${authority}-shadow`;
  return `${authority.slice(0, colon)}-shadow${authority.slice(colon)}`;
}

/** The mirror's copy of the request head as the router sent it upstream. */
export function shadowHead(sent: RequestHead, localAddress: string | undefined): RequestHead {
  const head = new RequestHead(sent.method, sent.path, false);
  head.authority = shadowAuthority(sent.authority);
  head.scheme = sent.scheme;
  head.bodyLength = sent.bodyLength;
  head.contentLength = sent.contentLength;
  const headers = head.headers;
  let forwardedFor = -1;
  for (let i = 0; i < sent.headers.length; i += 2) {
    const name = sent.headers[i]!;
    if (name === INTERNAL_HEADER) continue;
    if (name === 'x-forwarded-for') forwardedFor = headers.length;
    headers.push(name, sent.headers[i + 1]!);
  }
  headers.push(INTERNAL_HEADER, 'true');
  if (localAddress !== undefined) {
    if (forwardedFor < 0) headers.push('x-forwarded-for', localAddress);
    else headers[forwardedFor + 1] = `${headers[forwardedFor + 1]}, ${localAddress}`;
  }
  return head;
}

/**
 * Sends a copy of a complete request to `cluster`; returns at once. Nothing is sent when the
 * cluster has no host to take it (counted as for any request).
 */
export function sendShadow(
  cluster: Cluster,
  head: RequestHead,
  body: readonly Buffer[],
  trailers: readonly string[] | null,
  downstream: DownstreamAddresses,
  options: ShadowOptions,
): void {
  const host = cluster.chooseHost(connectionContext(null, head));
  if (host === null) {
    cluster.info.stats.counters.upstream_cx_none_healthy.inc();
    cluster.info.stats.chargeResponseCode(503);
    return;
  }
  // The async client has no downstream protocol: HTTP/1.1 unless the cluster speaks HTTP/2.
  const pool = cluster.httpPool(host, downstream, 'DEFAULT', 'http1', head.authority);
  if (pool === null) {
    cluster.info.stats.counters.upstream_cx_none_healthy.inc();
    cluster.info.stats.chargeResponseCode(503);
    return;
  }
  new ShadowRequest(cluster, host, pool, head, body, trailers, options).start(downstream);
}

class ShadowRequest implements PoolCallbacks, ResponseDecoder {
  private encoder: RequestEncoder | null = null;
  private hostStats: HostStats | null = null;
  private timer: TimeoutHandle | null = null;
  private readonly startedAt: number;
  /** The response head came: the response code is counted. */
  private responded = false;
  private done = false;

  constructor(
    private readonly cluster: Cluster,
    private readonly host: Host,
    private readonly pool: ConnectionPool,
    private readonly head: RequestHead,
    private readonly body: readonly Buffer[],
    private readonly trailers: readonly string[] | null,
    private readonly options: ShadowOptions,
  ) {
    this.startedAt = options.clock.eventNow();
  }

  start(downstream: DownstreamAddresses): void {
    if (this.options.timeoutMs > 0) this.timer = this.options.clock.setTimeout(this.onTimeout, this.options.timeoutMs);
    this.pool.newStream(this, this, downstream);
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
    this.end(503);
  }

  onUpstreamHead(head: ResponseHead): void {
    this.responded = true;
    this.host.outlier.putHttpResponseCode(head.status);
    this.cluster.info.stats.chargeResponseCode(head.status);
    if (head.status >= 500) this.hostStats!.rq_error.inc();
    else this.hostStats!.rq_success.inc();
  }

  onUpstreamBody(_chunk: Buffer): void {
    // Dropped: a mirror's answer goes nowhere.
  }

  onUpstreamComplete(_trailers: readonly string[] | null): void {
    this.cluster.info.stats.histograms.upstream_rq_time.recordValue(this.options.clock.eventNow() - this.startedAt);
    this.end(0);
  }

  onUpstreamReset(_reason: StreamResetReason): void {
    this.host.outlier.putResult(OutlierResult.LocalOriginConnectFailed);
    if (this.responded) {
      this.end(0);
      return;
    }
    this.hostStats!.rq_error.inc();
    this.end(503);
  }

  onUpstreamDrained(): void {}

  onUpstreamReadEnd(): void {}

  private readonly onTimeout = (): void => {
    this.timer = null;
    if (this.done) return;
    this.cluster.info.stats.counters.upstream_rq_timeout.inc();
    this.hostStats?.rq_timeout.inc();
    // Envoy's async client answers itself 504 unless the response had begun.
    this.host.outlier.putResult(OutlierResult.LocalOriginTimeout);
    if (this.encoder !== null) this.encoder.resetStream();
    else this.pool.cancel(this);
    this.end(this.responded ? 0 : 504);
  };

  /** @param localStatus the status the async client would answer itself with; 0: the upstream's response was counted */
  private end(localStatus: number): void {
    if (this.done) return;
    this.done = true;
    if (localStatus !== 0) this.cluster.info.stats.chargeResponseCode(localStatus);
    if (this.timer !== null) this.options.clock.clearTimeout(this.timer);
    this.timer = null;
    this.encoder = null;
  }
}
