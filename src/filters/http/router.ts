// The router filter (Envoy's router::Filter), the last HTTP filter: picks the route, the
// cluster and a host, sends the request through the host's connection pool and relays the
// response, with the route timeout and Envoy's local replies when any of that fails.
//
// One Router serves a downstream HTTP/1 connection, one request at a time: its per-request
// state is reset between requests instead of allocating a filter per request. Each HTTP/2
// stream has a Router of its own. A request whose route (or trusted headers) can retry also
// gets a RetryState, a copy of its body and a context that steers each retry away from the
// hosts tried; others pay for none of it.

import type { Clock, TimeoutHandle, Timer } from '../../common/clock';
import type { ClusterRouteAction, DirectResponseAction, MirrorPolicy, RedirectAction, Route, RoutingPriority, UpgradeSwitches, WeightedCluster } from '../../config/model';
import type { HeaderFormatContext } from './header_format';
import type { HeaderMutator } from './header_mutator';
import type { ConnectionPool, HttpProtocol, PoolCallbacks, RequestEncoder, ResponseDecoder, StreamResetReason, UpstreamStreamSource } from '../../http/codec';
import { OVERLOADED_HEADER } from '../../http/overloaded_header';
import { TcpUpstream } from '../../pool/tcp_upstream';
import { appendHeaderValue, BODY_CHUNKED, firstHeaderValue, hasHeader, removeHeaders, RequestHead, type ResponseHead, setHeader, upgradeTypeOf } from '../../http/message';
import { headerDump } from '../../log/connection_log';
import type { Logger } from '../../log/logger_api';
import type { HostStats } from '../../stats/stats';
import type { Cluster } from '../../upstream/worker/cluster';
import type { Host } from '../../upstream/worker/host';
import { isCanaryResponse } from '../../upstream/shared/canary';
import { connectionContext, type LoadBalancerContext } from '../../upstream/worker/lb/load_balancer';
import type { AsyncClient } from '../../upstream/worker/async_client';
import type { ClusterManager } from '../../upstream/worker/cluster_manager';
import { OutlierResult } from '../../upstream/worker/outlier/host_monitor';
import { percentageOfTimeout } from '../../upstream/worker/timeout_budget_stats';
import type { DownstreamAddresses } from '../../network/downstream_addresses';
import { forwardedProtoOf, type TrustedClient } from '../../http/trusted_client';
import { RetryLoadBalancerContext } from './retry_load_balancer_context';
import { wouldRetryFromReset, wouldRetryFromStatus } from './retry_on';
import { RetryState, RetryStatus } from './retry_state';
import { RouteLoadBalancerContext } from './route_load_balancer_context';
import type { RequestFacts, RouteTable } from './route_table';
import { matchedLength, pathEnd, type PeerCertificateFacts } from './route_match';
import { isGrpc } from '../../http/grpc';
import { formatGrpcTimeout, parseGrpcTimeout } from '../../http/grpc_timeout';
import { NO_HEALTHY_UPSTREAM, UPSTREAM_REQUEST_TIMEOUT, UPSTREAM_RESET_PREFIX } from '../../http/upstream_failure_text';
import { redirectLocation } from './redirect_location';
import { decideInternalRedirect, InternalRedirectHistory, type RedirectRefusal, type RedirectTarget } from './internal_redirect';
import { sendShadow, shadowHead } from './shadow_request';
import { upgradeAllowed } from './upgrade_policy';
import type { RouteEntry } from './http_filter';
import { headerValue } from './header_matcher';
import type { RouterStats } from './router_stats';
import type { VirtualClusterStats } from './virtual_cluster_stats';
import { evaluateFractionalPercent } from '../../runtime/fractional_percent';
import { ResponseFlag } from '../../stream_info/response_flags';
import type { DownstreamConnectionInfo, StreamInfo } from '../../stream_info/stream_info';
import type { RandomSource } from '../../common/random';

/** Changes a reply's headers, [name, value, ...], in place before it is sent. */
export type HeaderModifier = (headers: string[]) => void;

/** What the router needs from the connection manager that feeds it one downstream request. */
export interface DownstreamStream {
  /** The downstream peer's IP address. */
  readonly remoteAddress: string;
  /** Who sent the request as far as the proxy trusts it, and whether it is internal. */
  trustedClient(): TrustedClient;
  /** The downstream connection's facts (its TLS session, its addresses as text), made on first ask. */
  connectionInfo(): DownstreamConnectionInfo;
  /** When the stream began, in ms since the epoch. */
  startTime(): number;
  /** The downstream connection, for upstream filters that act on its addresses. */
  readonly connection: DownstreamAddresses;
  /** The downstream's protocol, for protocol_selection USE_DOWNSTREAM_PROTOCOL. */
  readonly protocol: HttpProtocol;
  /** The downstream connection's and the stream's ids, for log lines (`[C<id>][S<id>]`). */
  readonly connectionId: number;
  readonly streamId: number;
  /** What the access logs will read of the stream; null when nobody records it. */
  readonly info: StreamInfo | null;
  /**
   * Answers the request with a complete response of our own (text/plain when `body` is set; a
   * trailers-only response to a gRPC request).
   * @param extraHeaders headers to add, [name, value, ...]
   * @param details Envoy's response code details, for the access logs
   * @param grpcStatus the grpc-status of the answer to a gRPC request; default: the HTTP status's equivalent
   */
  sendLocalReply(
    status: number,
    body: string | Buffer,
    extraHeaders?: readonly string[],
    details?: string,
    modifyHeaders?: HeaderModifier | null,
    grpcStatus?: number,
  ): void;
  /** @param extraHeaders headers the router adds, [name, value, ...] */
  encodeHeaders(head: ResponseHead, upstreamServiceTimeMs: number, extraHeaders: readonly string[]): void;
  /** True when the downstream write buffer is over its limit; onDownstreamDrained follows. */
  encodeData(chunk: Buffer): boolean;
  /** Ends the response, with the upstream's trailers [name, value, ...] when it sent some. */
  encodeComplete(trailers: string[] | null): void;
  /** Aborts the response already under way: the downstream connection closes. */
  resetStream(): void;
  /** The route's idle_timeout replaces the connection manager's stream_idle_timeout for this stream (0 disables it). */
  setIdleTimeout(ms: number): void;
  /** Request flow control: stops (true) or restarts (false) reading the downstream request. */
  readDisable(disable: boolean): void;
  /** Sends the response bytes gathered so far; true when the write buffer is over its limit. */
  flush(): boolean;
  /** The internal redirects the downstream request took so far; null before its first. */
  readonly redirectHistory: InternalRedirectHistory | null;
  /**
   * Envoy's recreateStream: the stream ends unanswered and `head`, a followed redirect's request,
   * runs through the connection manager as a new stream of the same downstream request.
   */
  recreateStream(head: RequestHead, history: InternalRedirectHistory): void;
}

export interface RouterConfig {
  /** Replaced when RDS brings a new route configuration; a request keeps the one it was routed by. */
  routeTable: RouteTable;
  readonly clusters: ClusterManager;
  /** Sends the mirrors' copies. */
  readonly asyncClient: AsyncClient;
  readonly stats: RouterStats;
  /** Append the downstream address to x-forwarded-for (use_remote_address). */
  readonly useRemoteAddress: boolean;
  /** The server's local address, appended instead of a loopback peer's (Bootstrap.localAddress). */
  readonly localAddress: string | undefined;
  /** The downstream connection's buffer limit: request body held while connecting, or kept for retries, is bounded by it. */
  readonly bufferLimitBytes: number;
  /** Times per-try timeouts and retry back-off. */
  readonly clock: Clock;
  /** Draws the retry back-off's jitter. */
  readonly random: RandomSource;
  /** `router`, taken for this file by routerLog. */
  readonly log: Logger;
  /** The connection manager's upgrade_configs. */
  readonly upgrades: UpgradeSwitches;
  /** skip_xff_append: use_remote_address appends nothing to x-forwarded-for. */
  readonly skipXffAppend: boolean;
  /** The connection manager's `via`, appended to the request's via header; '' for none. */
  readonly via: string;
  /** The machine's name, for the %HOSTNAME% of custom headers. */
  readonly hostname: string;
}

/** RouterConfig.log from the `router` logger: resolved once per config, never per stream. */
export function routerLog(router: Logger): Logger {
  return router.forFile(__filename);
}

/** Marks a request the cluster's drop_overloads dropped (Envoy's x-envoy-drop-overload). */
const DROP_OVERLOAD_HEADER: readonly string[] = ['x-proxy-drop-overload', 'true'];
const NO_HEADERS: readonly string[] = [];
/** Envoy's x-envoy-attempt-count. */
const ATTEMPT_COUNT = 'x-proxy-attempt-count';
const END_OF_BODY = Buffer.alloc(0);
const HTTP10_TRANSFER_CODING = 'upstream response has a transfer-coding an HTTP/1.0 client cannot decode';

export class Router implements PoolCallbacks, ResponseDecoder, RequestFacts {
  // Per request; reset by finish().
  private active = false;
  private cluster: Cluster | null = null;
  /** The request's virtual cluster, when its virtual host has virtual clusters. */
  private vcluster: VirtualClusterStats | null = null;
  private pool: UpstreamStreamSource | null = null;
  private upstream: RequestEncoder | null = null;
  private hostStats: HostStats | null = null;
  private host: Host | null = null;
  /** The response came from a canary: its timing is charged under `canary.` too. */
  private upstreamCanary = false;
  /** The route's priority: which circuit breakers and pools its tries count against. */
  private priority: RoutingPriority = 'DEFAULT';
  /** The host header sent upstream: retries pick their pool with it too (auto_sni). */
  private upstreamAuthority = '';
  /** This request is a CONNECT the route's connect_config terminates here: each try is a TCP connection. */
  private terminateConnect = false;
  private upstreamHead: RequestHead | null = null;
  /** The tries so far, the first included; reported in x-proxy-attempt-count where the virtual host asks. */
  private attemptCount = 0;
  private attemptCountToUpstream = false;
  private attemptCountToDownstream = false;
  /** The route's response header mutations, and what their values are made of; null: none. */
  private responseMutations: readonly HeaderMutator[] | null = null;
  private formatContext: HeaderFormatContext | null = null;
  /** `set-cookie` headers the route's cookie hash policy made, for the response head. */
  private setCookieHeaders: readonly string[] = NO_HEADERS;
  private http10 = false;
  private pendingBody: Buffer[] | null = null;
  private pendingBytes = 0;
  /** The request's trailers, sent after its body on every try. */
  private requestTrailers: readonly string[] | null = null;
  private requestComplete = false;
  private requestCompleteTime = 0;
  private responseStarted = false;
  /**
   * A chunked response's head, held to the end of the batch of upstream input it came in:
   * a body the codec then finds malformed can still be answered 503, as no byte of the
   * response has reached the client. Null once it went downstream (responseStarted).
   */
  private heldHead: ResponseHead | null = null;
  private heldServiceTimeMs = 0;
  /**
   * The body that came in the same batch as the held head: its first chunk, then any others.
   * Nothing is allocated per stream for the common response of one chunk or none.
   */
  private heldChunk: Buffer | null = null;
  private heldChunks: Buffer[] | null = null;
  private timeoutMs = 0;
  private downstreamPaused = false;
  private upstreamPaused = false;
  /** Inside pool.newStream(): an idle connection is attached while the request is being read. */
  private dispatching = false;
  /** A try is under way: waiting for a connection, or on one. */
  private tryActive = false;
  /** When the current try started, for track_timeout_budgets. */
  private tryStart = 0;
  private perTryTimeoutMs = 0;
  private perTryTimer: TimeoutHandle | null = null;
  /** The cluster's max_stream_duration, armed when a try gets its stream. */
  private maxDurationTimer: TimeoutHandle | null = null;
  /** Null unless the request may retry. */
  private retry: RetryState | null = null;
  private retryContext: RetryLoadBalancerContext | null = null;
  /** The mirror policies this request drew (runtime_fraction); null when none. */
  private shadows: readonly MirrorPolicy[] | null = null;
  /** The whole request body as received so far, for the next try and the mirrors; null when neither needs it. */
  private keptBody: Buffer[] | null = null;
  private keptBodyBytes = 0;
  private retryTimer: TimeoutHandle | null = null;
  // The trusted request's x-proxy-* steering headers, as received (null: not sent).
  private headerRetryOn: string | null = null;
  private headerMaxRetries: string | null = null;
  private headerRetriableStatusCodes: string | null = null;
  private headerTimeout: string | null = null;
  private headerPerTryTimeout: string | null = null;

  /** The route, when it has an internal_redirect_policy; null otherwise. */
  private redirectRoute: Route | null = null;
  /** A body chunk of the request arrived: a followed redirect could not send it again. */
  private requestHadBody = false;
  /** A redirect being followed: what runs once the redirect's own response has drained. */
  private redirect: { readonly head: RequestHead; readonly history: InternalRedirectHistory } | null = null;

  /** The route of `routedHead`, drawn once per request whoever asks first (a filter, the upgrade check, decodeHeaders). */
  private routed: Route | null = null;
  /** The weighted cluster drawn with the route, when its action has weighted_clusters (Envoy's WeightedClusterEntry). */
  private routedWeighted: WeightedCluster | null = null;
  private routedHead: RequestHead | null = null;
  /** What the filters read of the route, made the first time one asks: several filters ask for each request. */
  private routedEntry: RouteEntry | null = null;

  // Per connection (HTTP/1) or stream: the route timer, made once and enabled for each request.
  private timer: Timer | null = null;

  /** The route table the request was routed by (RDS may have replaced the connection manager's since). */
  private table: RouteTable;

  constructor(
    private readonly config: RouterConfig,
    private readonly downstream: DownstreamStream,
  ) {
    this.table = config.routeTable;
  }

  /**
   * Whether the upgrade `head` asks for is allowed, by its route or the connection manager
   * (Envoy decides it as it builds the stream's filter chain).
   */
  allowsUpgrade(head: RequestHead, type: string): boolean {
    const route = this.routeFor(head);
    return upgradeAllowed(type, this.config.upgrades, route?.action.kind === 'route' ? route.action.upgrades : undefined);
  }

  /** The route `head` takes and its virtual host (Envoy's cached route), for the filters before the router; null when none matches. */
  routeEntry(head: RequestHead): RouteEntry | null {
    const route = this.routeFor(head);
    if (route === null) return null;
    return (this.routedEntry ??= { route, virtualHost: this.table.virtualHostOf(route), weightedCluster: this.routedWeighted });
  }

  /** A filter changed the request: its route (and weighted cluster) is drawn again when next asked for (Envoy's clearRouteCache). */
  clearRouteCache(): void {
    this.routedHead = null;
  }

  /**
   * The request's route, drawn once, with its weighted cluster; its internal-only headers are
   * gone first, as routes must not see them.
   */
  private routeFor(head: RequestHead): Route | null {
    if (this.routedHead !== head) {
      const table = (this.table = this.config.routeTable);
      this.cleanInternalOnlyHeaders(head);
      const route = (this.routed = table.route(head, this));
      const weighted = route?.action.kind === 'route' ? route.action.weightedClusters : undefined;
      this.routedWeighted = weighted === undefined ? null : table.weightedCluster(weighted);
      this.routedEntry = null;
      this.routedHead = head;
    }
    return this.routed;
  }

  decodeHeaders(head: RequestHead): void {
    const config = this.config;
    const route = this.routeFor(head);
    if (route === null) {
      if (config.log.enabled('debug')) config.log.debug(`${this.streamTag()}no cluster match for URL '${head.path}'`);
      config.stats.no_route.inc();
      this.downstream.info?.setResponseFlag(ResponseFlag.NoRouteFound);
      this.downstream.sendLocalReply(404, '', NO_HEADERS, 'route_not_found');
      return;
    }
    const info = this.downstream.info;
    if (info !== null && route.name !== '') info.routeName = route.name;
    const action = route.action;
    if (action.kind !== 'route') {
      this.directResponse(head, route, action);
      return;
    }
    // As Envoy, once the route is known, whatever follows (a local reply included).
    if (action.idleTimeoutMs !== undefined) this.downstream.setIdleTimeout(action.idleTimeoutMs);
    const weighted = this.routedWeighted;
    // From here every reply, the router's own included, carries the route's response mutations.
    const requestMutations = this.chooseMutations(head, route, weighted);
    const clusterName = weighted !== null ? weighted.name : action.clusterHeader !== undefined ? (headerValue(head, action.clusterHeader) ?? '') : action.cluster;
    const cluster = config.clusters.get(clusterName);
    if (cluster === undefined) {
      if (config.log.enabled('debug')) config.log.debug(`${this.streamTag()}unknown cluster '${clusterName}'`);
      config.stats.no_cluster.inc();
      // Envoy 1.16 flags a missing cluster as no route.
      info?.setResponseFlag(ResponseFlag.NoRouteFound);
      this.downstream.sendLocalReply(action.clusterNotFoundStatus ?? 503, '', NO_HEADERS, 'cluster_not_found', this.localReplyModifier());
      return;
    }
    if (info !== null) info.upstreamCluster = cluster.info.name;
    // As Envoy, once the cluster is known: a missing one is charged to no virtual cluster.
    this.vcluster = this.table.virtualCluster(route, head);
    config.stats.rq_total.inc();
    const drop = cluster.dropOverload;
    if (drop !== null && evaluateFractionalPercent(drop, config.random())) {
      this.dropOverload(cluster);
      return;
    }
    // Sets the timeouts, and the retry headers a trusted downstream sent.
    const upstreamHead = (this.upstreamHead = this.upstreamRequestHead(head, route, action));
    const virtualHost = this.table.attemptCountingHost(route);
    this.attemptCountToUpstream = virtualHost?.includeRequestAttemptCount === true;
    this.attemptCountToDownstream = virtualHost?.includeAttemptCountInResponse === true;
    if (requestMutations !== null) for (const mutator of requestMutations) mutator.apply(upstreamHead.headers, this.formatContext!);
    if (info !== null) info.forwardedRequest = upstreamHead;
    if (config.log.enabled('debug')) {
      config.log.debug(`${this.streamTag()}cluster '${clusterName}' match for URL '${head.path}'`);
      const pseudo = [':authority', upstreamHead.authority, ':path', upstreamHead.path, ':method', upstreamHead.method, ':scheme', upstreamHead.scheme];
      config.log.debug(`${this.streamTag()}router decoding headers:\n${headerDump(pseudo)}${headerDump(upstreamHead.headers)}`);
    }
    const metadataMatch = weighted === null ? action.metadataMatch : weighted.metadataMatch;
    const downstream = this.downstream;
    // Only a route that hashes or matches metadata pays for a context of its own.
    const routeContext =
      action.hashPolicies === undefined && metadataMatch === undefined
        ? null
        : new RouteLoadBalancerContext(action.hashPolicies, metadataMatch ?? null, head, downstream.connection, downstream);
    let context: LoadBalancerContext = routeContext ?? connectionContext(downstream.connection, head);
    if (action.retryPolicy !== undefined || this.headerRetryOn !== null) {
      const headers = { retryOn: this.headerRetryOn, maxRetries: this.headerMaxRetries, retriableStatusCodes: this.headerRetriableStatusCodes };
      this.retry = RetryState.create(action.retryPolicy, headers, cluster.info.stats.counters, this.vcluster, cluster.info.resourceManager(action.priority).retries, config.random);
      if (this.retry !== null) {
        const policy = action.retryPolicy;
        this.retryContext = new RetryLoadBalancerContext(context, policy?.avoidPreviousHosts ?? false, policy?.hostSelectionRetryMaxAttempts ?? 0);
        context = this.retryContext;
        this.keptBody = [];
      }
    }
    if (action.mirrorPolicies !== undefined) {
      this.shadows = this.drawShadows(action.mirrorPolicies);
      if (this.shadows !== null) this.keptBody ??= [];
    }
    this.headerRetryOn = this.headerMaxRetries = this.headerRetriableStatusCodes = null;
    const host = cluster.chooseHost(context);
    if (host === null) {
      this.noHealthyUpstream(cluster, true);
      return;
    }
    // auto_host_rewrite: the first host's name, kept for retries, as in Envoy.
    if (action.autoHostRewrite === true && host.hostname !== '') upstreamHead.authority = host.hostname;
    this.priority = action.priority;
    this.upstreamAuthority = upstreamHead.authority;
    this.terminateConnect = action.terminateConnect === true && head.method === 'CONNECT';
    const pool = this.streamSource(cluster, host);
    if (pool === null) {
      this.noHealthyUpstream(cluster, false);
      return;
    }
    if (!(pool instanceof TcpUpstream) && upgradeTypeOf(head) !== null && pool.protocol === 'http2') {
      // HTTP/2 carries an upgrade or a CONNECT only as a CONNECT stream, which this build does not send.
      this.chargeResponseCode(cluster, 503);
      this.replyLocally(503, 'upgrade to an HTTP/2 upstream is not supported', NO_HEADERS, 'upgrade_failed');
      return;
    }

    this.active = true;
    this.cluster = cluster;
    // As in Envoy, the cookies a hash policy made go on the upstream's response, not on local replies.
    if (routeContext !== null) this.setCookieHeaders = routeContext.setCookieHeaders;
    this.requestComplete = false;
    this.responseStarted = false;
    this.http10 = head.http10;
    if (action.internalRedirectPolicy !== undefined) this.redirectRoute = route;
    this.startTry(host, pool);
  }

  decodeData(chunk: Buffer): void {
    if (!this.active) return;
    if (chunk.length > 0) this.requestHadBody = true;
    if (this.keptBody !== null) this.keepBody(chunk);
    if (this.upstream !== null) {
      if (this.upstream.encodeData(chunk, false)) this.pauseDownstream();
      return;
    }
    // Not connected yet (or between tries): hold the body, within the connection's buffer limit.
    if (!this.tryActive) return;
    (this.pendingBody ??= []).push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes > this.config.bufferLimitBytes) this.pauseDownstream();
  }

  /** @param trailers the request's trailers, [name, value, ...], when it had some */
  decodeComplete(trailers: readonly string[] | null): void {
    if (!this.active) return;
    this.requestComplete = true;
    this.requestCompleteTime = this.config.clock.eventNow();
    this.requestTrailers = trailers;
    if (this.shadows !== null) this.sendShadows();
    if (this.upstream !== null) {
      const info = this.downstream.info;
      if (info !== null) info.lastUpstreamTxByteSent = info.sinceStart();
      if (trailers !== null) this.upstream.encodeTrailers(trailers);
      else if (this.upstream.encodeData(END_OF_BODY, true)) this.pauseDownstream();
      // A try's own timeout runs once it is connected and has the whole request.
      if (this.perTryTimeoutMs > 0) this.armPerTryTimeout();
    }
    // As in Envoy, the route timeout runs from the end of the request.
    if (this.timeoutMs > 0) this.armTimeout(this.timeoutMs);
  }

  /** The downstream connection went away, or gave up on this request. */
  onDownstreamReset(): void {
    if (!this.active) return;
    this.abortUpstream();
    this.finish();
  }

  /** The downstream stream is over (an HTTP/2 stream has a router of its own): its timer goes. */
  release(): void {
    this.onDownstreamReset();
    this.timer?.close();
    this.timer = null;
  }

  /** The downstream write buffer drained to half its limit: the response may flow again. */
  onDownstreamDrained(): void {
    if (this.upstreamPaused) {
      this.upstreamPaused = false;
      this.upstream?.readDisable(false);
    }
  }

  // ---- PoolCallbacks ------------------------------------------------------------------------

  onPoolReady(encoder: RequestEncoder, hostStats: HostStats): void {
    if (this.config.log.enabled('debug')) this.config.log.debug(`${this.streamTag()}pool ready`);
    const info = this.downstream.info;
    if (info !== null) {
      info.upstreamLocalAddress = encoder.localAddress();
      if (info.firstUpstreamTxByteSent < 0) info.firstUpstreamTxByteSent = info.sinceStart();
      if (this.requestComplete) info.lastUpstreamTxByteSent = info.sinceStart();
    }
    this.upstream = encoder;
    this.hostStats = hostStats;
    // The cluster counted its upstream_rq_total as it gave the stream.
    this.vcluster?.upstream_rq_total.inc();
    this.host!.outlier.putResult(OutlierResult.LocalOriginConnectSuccess);
    // As Envoy's upstream request: the stream's time counts from when the pool gave it.
    const maxDurationMs = this.cluster!.info.maxStreamDurationMs;
    if (maxDurationMs > 0) this.maxDurationTimer = this.config.clock.setTimeout(this.onMaxStreamDuration, maxDurationMs);
    const pending = this.pendingBody;
    const trailers = this.requestTrailers;
    // With trailers, they end the request, not its last body chunk.
    const complete = this.requestComplete;
    const endsWithBody = complete && trailers === null;
    if (this.attemptCountToUpstream) setHeader(this.upstreamHead!.headers, ATTEMPT_COUNT, String(this.attemptCount));
    encoder.encodeHeaders(this.upstreamHead!, endsWithBody && (pending === null || pending.length === 0));
    let over = false;
    if (pending !== null) {
      this.pendingBody = null;
      this.pendingBytes = 0;
      const last = pending.length - 1;
      for (let i = 0; i <= last; i++) over = encoder.encodeData(pending[i], endsWithBody && i === last) || over;
    }
    if (complete && trailers !== null) encoder.encodeTrailers(trailers);
    if (complete) {
      // A try's own timeout runs once it is connected and has the whole request (sent: the end flushed it).
      if (this.perTryTimeoutMs > 0) this.armPerTryTimeout();
    }
    // Attached at once, the head waits for the rest of this batch of downstream input.
    else if (!this.dispatching) over = encoder.flush() || over;
    // What held the downstream back was the pending body; from now on it is the upstream's buffer.
    if (over) this.pauseDownstream();
    else this.resumeDownstream();
  }

  onPoolFailure(reason: StreamResetReason): void {
    this.logUpstreamReset(reason);
    const stats = this.pool!.hostStats;
    stats.rq_error.inc();
    // A request the circuit breakers refused never reached the host: nothing to judge it by.
    const overflow = reason === 'overflow';
    if (!overflow) this.host!.outlier.putResult(OutlierResult.LocalOriginConnectFailed);
    if (this.maybeRetryReset(reason)) return;
    this.chargeResponseCode(this.cluster!, 503);
    this.downstream.info?.setResponseFlag(resetResponseFlag(reason));
    this.replyLocally(503, UPSTREAM_RESET_PREFIX + reason, overflow ? OVERLOADED_HEADER : NO_HEADERS, resetDetails(reason, false));
  }

  // ---- UpstreamStreamCallbacks --------------------------------------------------------------

  onUpstreamHead(head: ResponseHead): void {
    if (this.config.log.enabled('debug')) this.config.log.debug(`${this.streamTag()}upstream headers complete: end_stream=${head.bodyLength === 0}`);
    // HTTP/1.0 has no transfer codings (RFC 9112 section 6.1): such a body cannot reach the client.
    if (this.http10 && head.transferCodings !== null) {
      this.abortUpstream();
      this.fail(502, HTTP10_TRANSFER_CODING);
      return;
    }
    this.host!.outlier.putHttpResponseCode(head.status);
    const info = this.downstream.info;
    if (info !== null && info.firstUpstreamRxByteReceived < 0) info.firstUpstreamRxByteReceived = info.sinceStart();
    const retry = this.retry;
    if (retry !== null) {
      const retriable = wouldRetryFromStatus(retry.retryOn, retry.retriableStatusCodes, head.status, hasHeader(head.headers, 'x-proxy-ratelimited'));
      if (this.maybeRetry(retriable)) {
        this.hostStats!.rq_error.inc();
        return;
      }
      // The response goes downstream: nothing is retried after this.
      this.dropRetry();
    }
    const redirectRoute = this.redirectRoute;
    if (redirectRoute !== null && this.followsRedirect(redirectRoute, head)) return;
    this.heldHead = head;
    this.heldServiceTimeMs = this.requestComplete ? Math.floor(this.config.clock.eventNow() - this.requestCompleteTime) : 0;
    // Only a chunked body (HTTP/2: one of unknown length) can turn out malformed in the read that
    // brought its head; a counted or close-delimited one cannot, so that response starts at once.
    if (head.bodyLength !== BODY_CHUNKED) this.startResponse();
  }

  onUpstreamBody(chunk: Buffer): void {
    if (this.heldHead === null) {
      // A followed redirect's body is drained, for its connection to serve again.
      if (this.redirect === null && this.downstream.encodeData(chunk)) this.pauseUpstream();
    } else if (this.heldChunk === null) this.heldChunk = chunk;
    else (this.heldChunks ??= []).push(chunk);
  }

  onUpstreamComplete(trailers: string[] | null): void {
    if (this.redirect !== null) {
      this.endTry(true);
      this.runRedirect(this.redirect);
      return;
    }
    if (this.heldHead !== null) this.startResponse();
    const streamInfo = this.downstream.info;
    if (streamInfo !== null) streamInfo.lastUpstreamRxByteReceived = streamInfo.sinceStart();
    // Envoy's upstream_rq_time: from the end of the downstream request to the end of the response.
    const info = this.cluster!.info;
    if (this.requestComplete) {
      const elapsedMs = this.config.clock.eventNow() - this.requestCompleteTime;
      info.stats.recordRequestTime(elapsedMs, this.isInternal(), this.upstreamCanary);
      this.vcluster?.recordRequestTime(elapsedMs);
      if (info.timeoutBudgetStats !== null) info.timeoutBudgetStats.percentUsed.recordValue(percentageOfTimeout(elapsedMs, this.timeoutMs));
    }
    this.endTry(true);
    this.finish();
    this.downstream.encodeComplete(trailers);
  }

  /**
   * Envoy 1.16's onUpstreamReset: whatever the reason, a reset before the response started is a
   * 503 naming it (response flag UF connection failure, UC connection termination, including
   * a response the codec could not read, LR local reset, UO overflow, UR remote reset or
   * refused stream); 502 is only for a response the downstream cannot take. After the
   * response started, the downstream stream is reset.
   */
  onUpstreamReset(reason: StreamResetReason): void {
    this.logUpstreamReset(reason);
    this.host!.outlier.putResult(OutlierResult.LocalOriginConnectFailed);
    // The redirect was decided on its head; the rest of it would have been dropped anyway.
    if (this.redirect !== null) {
      this.endTry(false);
      this.runRedirect(this.redirect);
      return;
    }
    if (this.maybeRetryReset(reason)) return;
    this.downstream.info?.setResponseFlag(resetResponseFlag(reason));
    this.fail(503, UPSTREAM_RESET_PREFIX + reason, resetDetails(reason, this.responseStarted));
  }

  onUpstreamDrained(): void {
    this.resumeDownstream();
  }

  onUpstreamReadEnd(): void {
    if (this.heldHead !== null) this.startResponse();
    if (this.downstream.flush()) this.pauseUpstream();
  }

  /** Called after each batch of downstream input: the request bytes it produced go out together. */
  onDownstreamReadEnd(): void {
    if (this.upstream?.flush()) this.pauseDownstream();
  }

  // ---- internals ---------------------------------------------------------------------------

  /** The held head, and the body that came with it, go downstream: the response has started. */
  private startResponse(): void {
    const head = this.heldHead!;
    this.heldHead = null;
    this.responseStarted = true;
    // A canary's response, by its host's metadata or by the upstream's own word, as in Envoy.
    this.upstreamCanary = isCanaryResponse(this.host!, head.headers);
    this.chargeResponseCode(this.cluster!, head.status, this.upstreamCanary);
    if (head.status >= 500) this.hostStats!.rq_error.inc();
    else this.hostStats!.rq_success.inc();
    // As Envoy's router, the details are set before the route's mutations, which may print them.
    const info = this.downstream.info;
    if (info !== null) info.responseCodeDetails = 'via_upstream';
    // Envoy's order: the route's mutations, then the attempt count.
    if (this.responseMutations !== null) this.mutateResponse(head.headers);
    if (this.attemptCountToDownstream) setHeader(head.headers, ATTEMPT_COUNT, String(this.attemptCount));
    this.downstream.encodeHeaders(head, this.heldServiceTimeMs, this.setCookieHeaders);
    const first = this.heldChunk;
    if (first === null) return;
    const more = this.heldChunks;
    this.heldChunk = this.heldChunks = null;
    let over = this.downstream.encodeData(first);
    if (more !== null) for (const chunk of more) over = this.downstream.encodeData(chunk) || over;
    if (over) this.pauseUpstream();
  }

  /** Sends the request to `host` through `pool`: at once on an idle connection, else when one is ready. */
  private startTry(host: Host, pool: UpstreamStreamSource): void {
    this.host = host;
    this.attemptCount++;
    if (this.downstream.info !== null) this.downstream.info.upstreamHost = host.addressString;
    if (this.formatContext !== null) this.formatContext.upstreamHost = host;
    this.retryContext?.attempted.push(host);
    this.tryActive = true;
    if (this.cluster!.info.timeoutBudgetStats !== null) this.tryStart = this.config.clock.eventNow();
    this.pool = pool;
    this.dispatching = true;
    this.pool.newStream(this, this, this.downstream.connection);
    this.dispatching = false;
  }

  /**
   * The current try is over (its stream already ended or reset): its timer stops and, with
   * track_timeout_budgets, it records its share of the per-try timeout.
   */
  private endTry(recordBudget: boolean): void {
    if (!this.tryActive) return;
    this.tryActive = false;
    this.clearMaxDurationTimer();
    if (this.perTryTimer !== null) {
      this.config.clock.clearTimeout(this.perTryTimer);
      this.perTryTimer = null;
    }
    const budget = this.cluster!.info.timeoutBudgetStats;
    if (recordBudget && budget !== null) budget.perTryPercentUsed.recordValue(percentageOfTimeout(this.config.clock.eventNow() - this.tryStart, this.perTryTimeoutMs));
  }

  /** A try ended without a response: retried when the policy says so (Envoy's maybeRetryReset). */
  private maybeRetryReset(reason: StreamResetReason): boolean {
    const retry = this.retry;
    if (retry === null || this.responseStarted) return false;
    if (!this.maybeRetry(wouldRetryFromReset(retry.retryOn, reason))) return false;
    this.hostStats?.rq_error.inc();
    return true;
  }

  /**
   * Decides on the current try's outcome; on a retry, abandons the try and schedules the next
   * after the back-off. The request must be complete: its whole body is what the retry resends.
   */
  private maybeRetry(retriable: boolean): boolean {
    const retry = this.retry!;
    const status = retry.shouldRetry(retriable);
    if (status === RetryStatus.LimitExceeded) this.downstream.info?.setResponseFlag(ResponseFlag.UpstreamRetryLimitExceeded);
    if (status !== RetryStatus.Yes) return false;
    if (!this.requestComplete) {
      retry.release();
      this.config.stats.rq_retry_skipped_request_not_complete.inc();
      return false;
    }
    if (this.upstream !== null) this.upstream.resetStream();
    this.upstream = null;
    this.endTry(true);
    this.retryTimer = this.config.clock.setTimeout(this.onRetryTimer, retry.delayMs);
    return true;
  }

  private readonly onRetryTimer = (): void => {
    this.retryTimer = null;
    if (!this.active) return;
    const cluster = this.cluster!;
    const host = cluster.chooseHost(this.retryContext);
    if (host === null) {
      this.noHealthyUpstream(cluster, true);
      return;
    }
    const pool = this.streamSource(cluster, host);
    if (pool === null) {
      this.noHealthyUpstream(cluster, false);
      return;
    }
    this.hostStats = null;
    // The request is complete: the next try sends all of it as soon as it is connected.
    this.pendingBody = this.keptBody;
    this.startTry(host, pool);
  };

  /**
   * Where a try on `host` gets its stream: the host's HTTP pool, or for a CONNECT terminated here
   * a TCP connection of its own; null when max_connection_pools refuses the pool.
   */
  private streamSource(cluster: Cluster, host: Host): ConnectionPool | TcpUpstream | null {
    if (this.terminateConnect) return new TcpUpstream(cluster.hostCluster(host), host, this.priority);
    return cluster.httpPool(host, this.downstream.connection, this.priority, this.downstream.protocol, this.upstreamAuthority);
  }

  /** `[C<id>][S<id>] `, the start of this stream's log lines; only for a line about to be logged. */
  private streamTag(): string {
    return `[C${this.downstream.connectionId}][S${this.downstream.streamId}] `;
  }

  private logUpstreamReset(reason: StreamResetReason): void {
    if (this.config.log.enabled('debug')) this.config.log.debug(`${this.streamTag()}upstream reset: reset reason ${reason}`);
  }

  /**
   * Envoy's 503 when no host can take the request: none healthy (`noHost`), or max_connection_pools
   * refused a pool for the one picked, which Envoy answers alike without counting upstream_cx_none_healthy.
   */
  private noHealthyUpstream(cluster: Cluster, noHost: boolean): void {
    if (this.config.log.enabled('debug')) this.config.log.debug(`${this.streamTag()}no healthy host for HTTP connection pool`);
    if (noHost) cluster.info.stats.counters.upstream_cx_none_healthy.inc();
    this.chargeResponseCode(cluster, 503);
    this.downstream.info?.setResponseFlag(ResponseFlag.NoHealthyUpstream);
    this.replyLocally(503, NO_HEALTHY_UPSTREAM, NO_HEADERS, 'no_healthy_upstream');
  }

  /** Envoy's answer to a request drop_overloads dropped: no host is picked, nothing is sent upstream. */
  private dropOverload(cluster: Cluster): void {
    cluster.info.stats.counters.upstream_rq_drop_overload.inc();
    this.chargeResponseCode(cluster, 503);
    this.replyLocally(503, 'drop overload', DROP_OVERLOAD_HEADER, 'drop_overload');
  }

  /** Keeps a request body chunk for the next try and the mirrors, within the connection's buffer limit. */
  private keepBody(chunk: Buffer): void {
    if (this.keptBodyBytes + chunk.length > this.config.bufferLimitBytes) {
      // Too big to keep: as Envoy does, the request gives up its retries and its mirrors.
      this.cluster!.info.stats.counters.retry_or_shadow_abandoned.inc();
      this.shadows = null;
      this.dropRetry();
      return;
    }
    this.keptBody!.push(chunk);
    this.keptBodyBytes += chunk.length;
  }

  /** No more tries for this request: what a scheduled retry held goes back. */
  private dropRetry(): void {
    if (this.retry === null) return;
    this.retry.release();
    this.retry = null;
    this.retryContext = null;
    // The mirrors still want the body, sent when the request completes.
    if (this.shadows === null) this.dropKeptBody();
  }

  private dropKeptBody(): void {
    this.keptBody = null;
    this.keptBodyBytes = 0;
  }

  /** The mirror policies a request takes: each without a runtime_fraction, and each whose fraction it draws. */
  private drawShadows(policies: readonly MirrorPolicy[]): readonly MirrorPolicy[] | null {
    const table = this.table;
    const drawn = policies.filter((policy) => policy.runtimeFraction === undefined || table.drawFraction(policy.runtimeFraction));
    return drawn.length === 0 ? null : drawn;
  }

  /** The request is complete: a copy of it goes to each mirror drawn (Envoy's maybeDoShadowing). */
  private sendShadows(): void {
    for (const policy of this.shadows!) {
      const cluster = this.config.clusters.get(policy.cluster);
      // CDS may have removed it since the route was loaded.
      if (cluster === undefined) {
        if (this.config.log.enabled('debug')) this.config.log.debug(`${this.streamTag()}shadow cluster '${policy.cluster}' does not exist`);
        continue;
      }
      // A head of its own: the async client marks what it sends.
      const head = shadowHead(this.upstreamHead!);
      sendShadow(this.config.asyncClient, cluster, head, this.keptBody ?? [], this.requestTrailers, this.downstream.connection, this.timeoutMs);
    }
    this.shadows = null;
    if (this.retry === null) this.dropKeptBody();
  }

  private clearMaxDurationTimer(): void {
    if (this.maxDurationTimer === null) return;
    this.config.clock.clearTimeout(this.maxDurationTimer);
    this.maxDurationTimer = null;
  }

  /**
   * Envoy's onStreamMaxDurationReached: the try is reset (a local reset, which a retry policy
   * may retry); before the response started the downstream gets 408, after it a reset.
   */
  private readonly onMaxStreamDuration = (): void => {
    this.maxDurationTimer = null;
    if (!this.tryActive) return;
    this.cluster!.info.stats.counters.upstream_rq_max_duration_reached.inc();
    this.abortUpstream();
    this.upstream = null;
    if (this.maybeRetryReset('local reset')) return;
    this.endTry(true);
    const started = this.responseStarted;
    this.downstream.info?.setResponseFlag(ResponseFlag.UpstreamMaxStreamDurationReached);
    if (!started) {
      this.replyLocally(408, 'upstream max stream duration reached', NO_HEADERS, 'upstream_max_stream_duration_reached');
      return;
    }
    this.finish();
    this.downstream.resetStream();
  };

  private armPerTryTimeout(): void {
    this.perTryTimer = this.config.clock.setTimeout(this.onPerTryTimeout, this.perTryTimeoutMs);
  }

  private readonly onPerTryTimeout = (): void => {
    this.perTryTimer = null;
    if (!this.tryActive) return;
    this.cluster!.info.stats.counters.upstream_rq_per_try_timeout.inc();
    this.hostStats?.rq_timeout.inc();
    this.abortUpstream();
    this.upstream = null;
    this.host!.outlier.putResult(OutlierResult.LocalOriginTimeout);
    // As in Envoy, a timed out try is a local reset: retried under reset, 5xx or gateway-error.
    if (this.maybeRetryReset('local reset')) return;
    this.endTry(true);
    this.downstream.info?.setResponseFlag(ResponseFlag.UpstreamRequestTimeout);
    this.fail(504, UPSTREAM_REQUEST_TIMEOUT, 'upstream_per_try_timeout');
  };

  private armTimeout(ms: number): void {
    (this.timer ??= this.config.clock.createTimer(this.onTimeout)).enable(ms);
  }

  private readonly onTimeout = (): void => {
    const info = this.cluster!.info;
    info.stats.counters.upstream_rq_timeout.inc();
    this.vcluster?.upstream_rq_timeout.inc();
    // Between tries (in back-off) no host is waited on.
    if (this.tryActive) {
      this.hostStats?.rq_timeout.inc();
      this.host!.outlier.putResult(OutlierResult.LocalOriginTimeout);
    }
    // The try cut short by the route timeout records no per-try share (Envoy records the global only).
    if (info.timeoutBudgetStats !== null) info.timeoutBudgetStats.percentUsed.recordValue(percentageOfTimeout(this.config.clock.eventNow() - this.requestCompleteTime, this.timeoutMs));
    this.abortUpstream();
    this.endTry(false);
    this.downstream.info?.setResponseFlag(ResponseFlag.UpstreamRequestTimeout);
    this.fail(504, UPSTREAM_REQUEST_TIMEOUT, 'upstream_response_timeout');
  };

  /**
   * Ends the request with a local reply if nothing was sent downstream yet (a held head was
   * not), else by resetting the downstream stream (Envoy's onUpstreamAbort).
   */
  private fail(status: number, body: string, details?: string): void {
    if (this.responseStarted) {
      this.config.stats.rq_reset_after_downstream_response_started.inc();
      this.finish();
      this.downstream.resetStream();
      return;
    }
    this.chargeResponseCode(this.cluster!, status);
    this.hostStats?.rq_error.inc();
    this.replyLocally(status, body, NO_HEADERS, details);
  }

  /**
   * Envoy's chargeUpstreamCode: the cluster's response code statistics (internal or external,
   * canary when the host is one), and the virtual cluster's.
   */
  private chargeResponseCode(cluster: Cluster, code: number, canary = this.host?.canary === true): void {
    cluster.info.stats.chargeResponseCode(code, this.isInternal(), canary);
    this.vcluster?.chargeResponseCode(code);
  }

  /** Ends the request with a reply of the router's own (its route's mutations on it: see localReplyModifier). */
  private replyLocally(status: number, body: string, extraHeaders: readonly string[], details: string | undefined): void {
    const modify = this.localReplyModifier();
    this.finish();
    this.downstream.sendLocalReply(status, body, extraHeaders, details, modify);
  }

  /**
   * Envoy's modify_headers for the router's own replies once a route is chosen: the route's
   * response mutations, then x-proxy-attempt-count where the virtual host asks for it. Null
   * when there is nothing to do.
   */
  private localReplyModifier(): HeaderModifier | null {
    const mutations = this.responseMutations;
    const context = this.formatContext;
    const attempts = this.attemptCountToDownstream && this.attemptCount > 0 ? String(this.attemptCount) : null;
    if (mutations === null && attempts === null) return null;
    return (headers) => {
      if (mutations !== null) for (const mutator of mutations) mutator.apply(headers, context!);
      if (attempts !== null) setHeader(headers, ATTEMPT_COUNT, attempts);
    };
  }

  private abortUpstream(): void {
    if (this.upstream !== null) this.upstream.resetStream();
    else if (this.tryActive) this.pool?.cancel(this);
  }

  private pauseUpstream(): void {
    if (this.upstreamPaused || this.upstream === null) return;
    this.upstreamPaused = true;
    this.upstream.readDisable(true);
  }

  private pauseDownstream(): void {
    if (this.downstreamPaused) return;
    this.downstreamPaused = true;
    this.downstream.readDisable(true);
  }

  private resumeDownstream(): void {
    if (!this.downstreamPaused) return;
    this.downstreamPaused = false;
    this.downstream.readDisable(false);
  }

  /** Forgets the request, before the downstream hears of its end (which may start the next). */
  private finish(): void {
    this.timer?.disable();
    this.resumeDownstream();
    // A connection going back to its pool must not stay held back by this response.
    if (this.upstreamPaused) this.upstream?.readDisable(false);
    if (this.perTryTimer !== null) this.config.clock.clearTimeout(this.perTryTimer);
    if (this.retryTimer !== null) this.config.clock.clearTimeout(this.retryTimer);
    this.clearMaxDurationTimer();
    this.perTryTimer = null;
    this.retryTimer = null;
    this.tryActive = false;
    this.shadows = null;
    this.dropRetry();
    this.dropKeptBody();
    this.active = false;
    this.cluster = null;
    this.vcluster = null;
    this.pool = null;
    this.upstream = null;
    this.hostStats = null;
    this.host = null;
    this.upstreamCanary = false;
    this.upstreamHead = null;
    this.attemptCount = 0;
    this.attemptCountToUpstream = this.attemptCountToDownstream = false;
    this.responseMutations = null;
    this.formatContext = null;
    this.setCookieHeaders = NO_HEADERS;
    this.pendingBody = null;
    this.pendingBytes = 0;
    this.requestTrailers = null;
    this.heldHead = null;
    this.heldChunk = this.heldChunks = null;
    this.upstreamPaused = false;
    this.redirectRoute = null;
    this.requestHadBody = false;
    this.redirect = null;
    // An idle keep-alive connection keeps its router: it holds nothing of the last request.
    this.routedHead = null;
    this.routed = null;
    this.routedWeighted = null;
    this.routedEntry = null;
  }

  /**
   * What use_remote_address appends to x-forwarded-for: the peer's address, or for a peer on
   * loopback the server's own local address, as Envoy does.
   */
  private forwardedForAddress(): string {
    const remote = this.downstream.remoteAddress;
    const local = this.config.localAddress;
    return local !== undefined && isLoopback(remote) ? local : remote;
  }

  /**
   * Envoy's setupRedirect, for a response of a route with an internal_redirect_policy: a redirect
   * the policy follows is not sent downstream; once its body has drained (runRedirect) the
   * request runs again at its Location. Otherwise it goes downstream as any response.
   */
  private followsRedirect(route: Route, response: ResponseHead): boolean {
    const policy = (route.action as ClusterRouteAction).internalRedirectPolicy!;
    if (!policy.redirectResponseCodes.includes(response.status)) return false;
    const config = this.config;
    if (config.log.enabled('debug')) config.log.debug(`${this.streamTag()}attempting internal redirect`);
    const sent = this.upstreamHead!;
    // Envoy's schemeIsHttp: x-forwarded-proto (which the router always sets), then the connection.
    const downstreamHttps = sent.scheme === 'https' && headerValue(sent, 'x-forwarded-proto') !== 'http';
    const history = this.downstream.redirectHistory ?? new InternalRedirectHistory();
    let next: RequestHead | null = null;
    const decision = decideInternalRedirect(
      {
        route,
        policy,
        // A request with a body, or not received whole, is not sent again (Envoy 1.16).
        requestReplayable: this.requestComplete && !this.requestHadBody && sent.upgrade === null,
        downstreamHttps,
        location: firstHeaderValue(response.headers, 'location'),
        history,
      },
      (target) => this.table.route((next = this.redirectedHead(sent, target, downstreamHttps)), this),
    );
    const counters = this.cluster!.info.stats.counters;
    if ('refusal' in decision) {
      if (config.log.enabled('debug')) config.log.debug(`${this.streamTag()}internal redirect failed: ${decision.refusal}`);
      this.countRefusal(decision.refusal);
      counters.upstream_internal_redirect_failed_total.inc();
      return false;
    }
    counters.upstream_internal_redirect_succeeded_total.inc();
    this.redirect = { head: next!, history };
    return true;
  }

  private countRefusal(refusal: RedirectRefusal): void {
    const stats = this.config.stats;
    switch (refusal) {
      case 'bad_location':
        stats.passthrough_internal_redirect_bad_location.inc();
        break;
      case 'unsafe_scheme':
        stats.passthrough_internal_redirect_unsafe_scheme.inc();
        break;
      case 'too_many_redirects':
        stats.passthrough_internal_redirect_too_many_redirects.inc();
        break;
      case 'no_route':
        stats.passthrough_internal_redirect_no_route.inc();
        break;
      case 'predicate':
        stats.passthrough_internal_redirect_predicate.inc();
        break;
      default:
        // request_not_complete, no_location: Envoy counts them in the cluster's failures only.
        break;
    }
  }

  /**
   * Envoy's convertRequestHeadersForInternalRedirect: the head sent upstream (the route's request
   * mutations included, as Envoy documents) at the Location, x-proxy-original-url naming the URL
   * it replaces. x-forwarded-for loses the router's own append, which the next pass makes again,
   * so that the request is sanitized once. The Location's scheme only decided the scheme checks:
   * here a request's scheme is its connection's, and an upstream's :scheme its own connection's.
   */
  private redirectedHead(sent: RequestHead, target: RedirectTarget, downstreamHttps: boolean): RequestHead {
    const head = new RequestHead(sent.method, target.path, this.http10);
    head.authority = target.authority;
    head.scheme = sent.scheme;
    head.contentLength = sent.contentLength;
    const config = this.config;
    const appended = config.useRemoteAddress && !config.skipXffAppend ? this.forwardedForAddress() : null;
    const headers = sent.headers;
    const out = head.headers;
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i];
      let value = headers[i + 1];
      if (name === 'x-forwarded-for' && appended !== null) {
        if (value === appended) continue;
        if (value.endsWith(`, ${appended}`)) value = value.slice(0, value.length - appended.length - 2);
      }
      out.push(name, value);
    }
    setHeader(out, 'x-proxy-original-url', `${downstreamHttps ? 'https' : 'http'}://${sent.authority}${sent.path}`);
    return head;
  }

  /** The followed redirect's response is over: this request ends here and its next pass begins. */
  private runRedirect(redirect: { readonly head: RequestHead; readonly history: InternalRedirectHistory }): void {
    this.finish();
    this.downstream.recreateStream(redirect.head, redirect.history);
  }

  /**
   * A redirect or a direct response, answered here; as in Envoy, a 201 or 3xx carries a Location
   * (a direct response's is the request's own URL).
   */
  private directResponse(head: RequestHead, route: Route, action: DirectResponseAction | RedirectAction): void {
    this.config.stats.rq_direct_response.inc();
    const status = action.status;
    const body = action.kind === 'redirect' ? '' : action.body;
    const headers: string[] = [];
    if (status === 201 || (status >= 300 && status < 400)) {
      const request = { scheme: this.forwardedProto(head), authority: head.authority, path: head.path, matchedLength: matchedLength(route.match, head.path) };
      headers.push('location', redirectLocation(action.kind === 'redirect' ? action : null, request));
    }
    this.chooseMutations(head, route, null);
    this.downstream.sendLocalReply(status, body, headers, 'direct_response', this.localReplyModifier());
  }

  /**
   * The route's header mutations for this request, in Envoy's order (the weighted cluster's
   * first): the response's kept for every reply, the request's returned for the head sent
   * upstream (null: none). Also what their values read.
   */
  private chooseMutations(head: RequestHead, route: Route, weighted: WeightedCluster | null): readonly HeaderMutator[] | null {
    const table = this.table;
    if (!table.hasHeaderMutations) return null;
    this.responseMutations = this.formatContext = null;
    const own = table.headerMutations(route);
    const entry = weighted === null ? null : table.headerMutations(weighted);
    const response = entry === null || entry.response.length === 0 ? own.response : [...entry.response, ...own.response];
    const request = entry === null || entry.request.length === 0 ? own.request : [...entry.request, ...own.request];
    if (request.length === 0 && response.length === 0) return null;
    this.formatContext = {
      head,
      connection: this.downstream.connection,
      client: this.downstream.trustedClient(),
      protocol: this.downstream.protocol === 'http2' ? 'HTTP/2' : head.http10 ? 'HTTP/1.0' : 'HTTP/1.1',
      hostname: this.config.hostname,
      ssl: this.downstream.connectionInfo().ssl,
      startTime: this.downstream.startTime(),
      upstreamHost: null,
      info: this.downstream.info,
    };
    this.responseMutations = response.length === 0 ? null : response;
    return request.length === 0 ? null : request;
  }

  private mutateResponse(headers: string[]): void {
    for (const mutator of this.responseMutations!) mutator.apply(headers, this.formatContext!);
  }

  /** The request's scheme as x-forwarded-proto tells it: a trusted client's, else the connection's. */
  forwardedProto(head: RequestHead): string {
    return forwardedProtoOf(head, this.config.useRemoteAddress);
  }

  /** internal_only_headers: Envoy cleans them off before routing, from any request not from inside. */
  private cleanInternalOnlyHeaders(head: RequestHead): void {
    const internalOnly = this.table.internalOnlyHeaders;
    if (internalOnly !== null && !this.isInternal()) removeHeaders(head.headers, (name) => internalOnly.has(name));
  }

  peerCertificate(): PeerCertificateFacts | null {
    return this.downstream.connectionInfo().ssl;
  }

  /** Whether Envoy would mark the request x-envoy-internal. */
  isInternal(): boolean {
    return this.downstream.trustedClient().internal;
  }

  /**
   * The header map sent upstream: hop-by-hop headers gone, proxy headers set; the codec serializes it.
   * Sets the request's route and per-try timeouts, and keeps the retry headers of a trusted
   * downstream for decodeHeaders; the x-proxy-* steering headers never go upstream.
   */
  private upstreamRequestHead(head: RequestHead, route: Route, action: ClusterRouteAction): RequestHead {
    let path = head.path;
    let originalPath: string | null = null;
    const regex = action.regexRewrite !== undefined || action.hostRewritePathRegex !== undefined ? this.table.regexRewrites(route) : null;
    if (action.prefixRewrite !== undefined) {
      originalPath = path;
      path = action.prefixRewrite + path.slice(matchedLength(route.match, path));
    } else if (regex?.path) {
      // The path before its query and fragment is rewritten; they follow as they were.
      originalPath = path;
      const end = pathEnd(path, true);
      path = regex.path.apply(path.slice(0, end)) + path.slice(end);
    }
    const upstream = new RequestHead(head.method, path, false);
    upstream.upgrade = head.upgrade;
    // As Envoy, the authority is made from the path as the client sent it.
    upstream.authority = regex?.host ? regex.host.apply(head.path.slice(0, pathEnd(head.path, true))) : rewrittenAuthority(head, action);
    upstream.scheme = head.scheme;
    upstream.bodyLength = head.bodyLength;
    upstream.contentLength = head.contentLength;
    const out = upstream.headers;

    let forwardedFor: string | null = null;
    let forwardedProto = false;
    let steering = false;
    const headers = head.headers;
    const dropped = head.connectionTokens;
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i];
      if (dropped !== null && dropped.includes(name)) continue;
      switch (proxyHeaderOf(name)) {
        case ProxyHeader.ForwardedFor:
          forwardedFor = forwardedFor === null ? headers[i + 1] : `${forwardedFor}, ${headers[i + 1]}`;
          continue;
        case ProxyHeader.ForwardedProto:
          if (this.config.useRemoteAddress) continue;
          forwardedProto = true;
          break;
        case ProxyHeader.ExpectedTimeout:
        case ProxyHeader.OriginalPath:
        case ProxyHeader.Internal:
        case ProxyHeader.Consumed:
          // Ours to set.
          continue;
        case ProxyHeader.ExternalAddress:
          // The edge says who the client is; a proxy inside passes on what the edge said.
          if (this.downstream.trustedClient().edge) continue;
          break;
        case ProxyHeader.TrustedOnly:
          if (!this.isInternal()) continue;
          break;
        case ProxyHeader.Steering:
          steering = true;
          this.keepSteeringHeader(name, headers[i + 1]);
          continue;
        case ProxyHeader.None:
          break;
      }
      out.push(name, headers[i + 1]);
    }

    const grpcTimeout = action.maxGrpcTimeoutMs !== undefined && isGrpc(head);
    this.timeoutMs = grpcTimeout ? grpcRouteTimeout(head, action.maxGrpcTimeoutMs!, action.grpcTimeoutOffsetMs ?? 0) : action.timeoutMs;
    this.perTryTimeoutMs = action.retryPolicy?.perTryTimeoutMs ?? 0;
    if (steering) this.applySteeringHeaders();
    // A try may not outlast the request: then it has no timeout of its own.
    if (this.timeoutMs > 0 && this.perTryTimeoutMs >= this.timeoutMs) this.perTryTimeoutMs = 0;
    if (this.config.useRemoteAddress && !this.config.skipXffAppend) {
      const address = this.forwardedForAddress();
      forwardedFor = forwardedFor === null ? address : `${forwardedFor}, ${address}`;
    }
    if (forwardedFor !== null) out.push('x-forwarded-for', forwardedFor);
    if (!forwardedProto) out.push('x-forwarded-proto', head.scheme);
    const client = this.downstream.trustedClient();
    if (client.internal) out.push('x-proxy-internal', 'true');
    else if (client.edge) out.push('x-proxy-external-address', client.ip);
    if (this.config.via !== '') appendHeaderValue(out, 'via', this.config.via);
    // What the upstream may take: a try's own timeout when there is one, else the route's.
    const expectedTimeoutMs = this.perTryTimeoutMs > 0 ? this.perTryTimeoutMs : this.timeoutMs;
    if (expectedTimeoutMs > 0) {
      out.push('x-proxy-expected-rq-timeout-ms', String(expectedTimeoutMs));
      // The upstream gRPC server learns the deadline it really has.
      if (grpcTimeout) setHeader(out, 'grpc-timeout', formatGrpcTimeout(expectedTimeoutMs));
    }
    if (originalPath !== null) out.push('x-proxy-original-path', originalPath);
    return upstream;
  }

  private keepSteeringHeader(name: string, value: string): void {
    switch (name) {
      case 'x-proxy-retry-on':
        this.headerRetryOn = this.headerRetryOn === null ? value : `${this.headerRetryOn},${value}`;
        break;
      case 'x-proxy-max-retries':
        this.headerMaxRetries ??= value;
        break;
      case 'x-proxy-retriable-status-codes':
        this.headerRetriableStatusCodes = this.headerRetriableStatusCodes === null ? value : `${this.headerRetriableStatusCodes},${value}`;
        break;
      case 'x-proxy-upstream-rq-timeout-ms':
        this.headerTimeout ??= value;
        break;
      default:
        this.headerPerTryTimeout ??= value;
    }
  }

  /**
   * Envoy's connection manager strips the steering headers of a request that is not internal;
   * its router takes those of one that is (FilterUtility::finalTimeout, RetryStateImpl).
   */
  private applySteeringHeaders(): void {
    const timeout = this.headerTimeout;
    const perTry = this.headerPerTryTimeout;
    this.headerTimeout = this.headerPerTryTimeout = null;
    if (!this.isInternal()) {
      this.headerRetryOn = this.headerMaxRetries = this.headerRetriableStatusCodes = null;
      return;
    }
    if (timeout !== null && /^\d+$/.test(timeout.trim())) this.timeoutMs = Number(timeout.trim());
    if (perTry !== null && /^\d+$/.test(perTry.trim())) this.perTryTimeoutMs = Number(perTry.trim());
  }
}

/**
 * A gRPC request's route timeout under max_grpc_timeout (Envoy 1.16's finalTimeout): its
 * grpc-timeout (none: no timeout), less the offset when more remains, capped by the maximum
 * unless that is 0.
 */
function grpcRouteTimeout(head: RequestHead, maxMs: number, offsetMs: number): number {
  const header = headerValue(head, 'grpc-timeout');
  let timeout = (header === undefined ? null : parseGrpcTimeout(header)) ?? 0;
  if (offsetMs < timeout) timeout -= offsetMs;
  return maxMs !== 0 && (timeout === 0 || timeout > maxMs) ? maxMs : timeout;
}

/** Envoy's streamResetReasonToResponseFlag. */
function resetResponseFlag(reason: StreamResetReason): ResponseFlag {
  switch (reason) {
    case 'connection failure':
      return ResponseFlag.UpstreamConnectionFailure;
    case 'connection termination':
      return ResponseFlag.UpstreamConnectionTermination;
    case 'local reset':
      return ResponseFlag.LocalReset;
    case 'overflow':
      return ResponseFlag.UpstreamOverflow;
    default:
      return ResponseFlag.UpstreamRemoteReset;
  }
}

/** Envoy's response code details for an upstream reset. */
function resetDetails(reason: StreamResetReason, responseStarted: boolean): string {
  return `${responseStarted ? 'upstream_reset_after_response_started' : 'upstream_reset_before_response_started'}{${reason}}`;
}

/** 127.0.0.0/8, ::1, and the IPv4-mapped form of 127.0.0.0/8. */
function isLoopback(ip: string): boolean {
  return ip.startsWith('127.') || ip === '::1' || ip.startsWith('::ffff:127.');
}

const enum ProxyHeader {
  None,
  ForwardedFor,
  ForwardedProto,
  ExpectedTimeout,
  OriginalPath,
  /** A retry or timeout header the router takes from a trusted downstream. */
  Steering,
  /** A header Envoy's router consumes that this build does not act on (gRPC retries, hedging). */
  Consumed,
  /** x-proxy-internal: set on an internal request, never taken from the downstream. */
  Internal,
  /** x-proxy-external-address: set on an edge request. */
  ExternalAddress,
  /** A header Envoy's connection manager drops from a request that is not internal. */
  TrustedOnly,
}

/** Recognizes the request headers the router sets or edits; by length first, as most are none. */
function proxyHeaderOf(name: string): ProxyHeader {
  switch (name.length) {
    case 15:
      if (name === 'x-forwarded-for') return ProxyHeader.ForwardedFor;
      return name === 'x-proxy-ip-tags' ? ProxyHeader.TrustedOnly : ProxyHeader.None;
    case 16:
      if (name === 'x-proxy-retry-on') return ProxyHeader.Steering;
      return name === 'x-proxy-internal' ? ProxyHeader.Internal : ProxyHeader.None;
    case 17:
      return name === 'x-forwarded-proto' ? ProxyHeader.ForwardedProto : ProxyHeader.None;
    case 19:
      if (name === 'x-proxy-max-retries') return ProxyHeader.Steering;
      return name === 'x-proxy-force-trace' ? ProxyHeader.TrustedOnly : ProxyHeader.None;
    case 21:
      if (name === 'x-proxy-original-path') return ProxyHeader.OriginalPath;
      return name === 'x-proxy-retry-grpc-on' ? ProxyHeader.Consumed : ProxyHeader.None;
    case 30:
      if (name === 'x-proxy-expected-rq-timeout-ms') return ProxyHeader.ExpectedTimeout;
      if (name === 'x-proxy-upstream-rq-timeout-ms' || name === 'x-proxy-retriable-status-codes') return ProxyHeader.Steering;
      if (name === 'x-proxy-upstream-alt-stat-name') return ProxyHeader.Consumed;
      return name === 'x-proxy-retriable-header-names' ? ProxyHeader.Consumed : ProxyHeader.None;
    case 32:
      return name === 'x-proxy-hedge-on-per-try-timeout' ? ProxyHeader.Consumed : ProxyHeader.None;
    case 24:
      return name === 'x-proxy-external-address' ? ProxyHeader.ExternalAddress : ProxyHeader.None;
    case 38:
      return name === 'x-proxy-upstream-rq-per-try-timeout-ms' ? ProxyHeader.Steering : ProxyHeader.None;
    case 40:
      return name === 'x-proxy-upstream-rq-timeout-alt-response' ? ProxyHeader.Consumed : ProxyHeader.None;
    default:
      return ProxyHeader.None;
  }
}

/** The upstream request's authority before a host is chosen: host_rewrite_literal, a non-empty host_rewrite_header, or the request's. */
function rewrittenAuthority(head: RequestHead, action: ClusterRouteAction): string {
  if (action.hostRewriteLiteral !== undefined) return action.hostRewriteLiteral;
  if (action.hostRewriteHeader !== undefined) {
    const value = headerValue(head, action.hostRewriteHeader);
    if (value !== undefined && value !== '') return value;
  }
  return head.authority;
}


