// The HTTP connection manager network filter (Envoy's http_connection_manager): one filter
// chain's configuration, shared by its connections, and the choice of each connection's codec
// (codec_type, ALPN, the HTTP/2 preface).

import * as os from 'node:os';
import type * as net from 'node:net';
import type * as tls from 'node:tls';
import { atField, FieldError } from '../../../config/errors';
import type { HttpConnectionManagerConfig, NodeInfo, RouteConfiguration } from '../../../config/model';
import { rdsKey } from '../../../config/rds_sources';
import type { AccessLog } from '../../../access_log/access_log';
import type { ConnectionIds } from '../../../log/connection_log';
import type { Logger } from '../../../log/logger_api';
import { DateCache } from '../../../http/date_cache';
import type { HttpProtocol } from '../../../http/codec';
import { Http1CodecStats } from '../../../http/http1/codec_stats';
import { http1ServerLog, type Http1ServerSettings } from '../../../http/http1/server_connection';
import { Http2CodecStats } from '../../../http/http2/codec_stats';
import { sniffHttp2Preface } from '../../../http/http2/preface';
import type { Http2ServerSettings } from '../../../http/http2/server_connection';
import type { NetworkFilterFactory } from '../../../listener/network_filter';
import type { DrainDecider } from '../../../server/drain_decider';
import type { OverloadState } from '../../../overload/overload_state';
import type { RuntimeSource } from '../../../runtime/live_runtime';
import type { StatsStore } from '../../../stats/stats';
import type { Clock } from '../../../common/clock';
import { TimeoutList } from '../../../common/timeout_list';
import { utf8Bytes } from '../../../common/byte_string';
import { mathRandom } from '../../../common/random';
import { HttpTracing } from '../../../tracing/http_tracing';
import type { OperationName, Tracer } from '../../../tracing/tracer';
import { ConnectionManagerTracingStats } from '../../../tracing/tracing_stats';
import type { AsyncClient } from '../../../upstream/worker/async_client';
import type { ClusterManager } from '../../../upstream/worker/cluster_manager';
import type { HttpFilterFactory } from '../../http/http_filter';
import { createHttpFilterFactory, type HttpFilterContext } from '../../http/http_filter_registry';
import { RouteTable } from '../../http/route_table';
import { type RouterConfig, routerLog } from '../../http/router';
import { RouterStats } from '../../http/router_stats';
import { ActiveStream, activeStreamLog } from './active_stream';
import { ConnectionManager, connectionManagerLogs } from './connection_manager';
import type { RouteConfigUpdates } from './route_config_updates';
import { HttpConnectionManagerStats } from './stats';
import type { StreamTimerSettings } from './stream_timers';
import type { WriteBatch } from '../../../network/write_batch';

const ROUTER_FILTER = 'proxy.filters.http.router';

/**
 * The most streams kept between requests, per protocol: more than a busy worker's concurrent
 * requests, so that a request allocates none, while a burst's leftovers do not stay for good.
 */
const STREAM_POOL_MAX = 1024;

export interface HttpConnectionManagerDeps {
  readonly stats: StatsStore;
  readonly clusters: ClusterManager;
  readonly drain: DrainDecider;
  /** What the worker's overload manager has turned on: stop_accepting_requests, disable_http_keepalive. */
  readonly overload: OverloadState;
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
  /** Where the connections' small writes wait for the end of the event loop's turn; null: they go at once. */
  readonly writeBatch: WriteBatch | null;
  /** Bootstrap.localAddress: what x-forwarded-for gets for a peer on loopback. */
  readonly localAddress: string | undefined;
  /** Bootstrap.node, for add_user_agent. */
  readonly node: NodeInfo;
  /** The worker's runtime, for route runtime_fraction. */
  readonly runtime: RuntimeSource;
  /** What the HTTP filters before the router read from the worker. */
  readonly filterContext: HttpFilterContext;
  /** The access_log list, built; empty, no stream records a StreamInfo. */
  readonly accessLogs: readonly AccessLog[];
  readonly asyncClient: AsyncClient;
  /** The tracer spans go to, when config.tracing is set: its provider's, else the bootstrap's; null when neither names one. */
  readonly tracer: Tracer | null;
  /** The side of the calls traced (the listener's traffic_direction). */
  readonly tracingOperation: OperationName;
  /** The route configurations RDS brought to the worker: what a connection manager with `rds` serves. */
  readonly routeConfigs: RouteConfigUpdates;
}

export class HttpConnectionManagerFactory implements NetworkFilterFactory {
  readonly stats: HttpConnectionManagerStats;
  readonly http1Settings: Http1ServerSettings;
  readonly http2Settings: Http2ServerSettings;
  readonly router: RouterConfig;
  readonly streamTimers: StreamTimerSettings;
  readonly dates = new DateCache();
  /** The decoder filters before the router, in order; null when the router is alone. */
  readonly filters: readonly HttpFilterFactory[] | null;
  /** deps.log taken for this file's lines, for active_stream.ts's, and deps.log and deps.connectionLog for connection_manager.ts's. */
  readonly log: Logger;
  readonly streamLog: Logger;
  readonly connectionLogs: ReturnType<typeof connectionManagerLogs>;
  readonly accessLogs: readonly AccessLog[];
  /** Each stream keeps a StreamInfo: access logs read it, header values (RESPONSE_FLAGS, ...), or tracing. */
  readonly recordsStreams: boolean;
  /** Decides and starts each request's span; null when the connection manager does not trace. */
  readonly tracing: HttpTracing | null;
  /** Times the connections and their streams. */
  readonly clock: Clock;
  /** Open connections, for the end of a drain. */
  readonly connections = new Set<ConnectionManager>();
  /** idle_timeout of every connection; null without one. */
  readonly idleTimeouts: TimeoutList<ConnectionManager> | null;
  /** Streams between requests, each with its filters, router and timers, for any connection's next request of that protocol. */
  private readonly idleStreams: Record<HttpProtocol, ActiveStream[]> = { http1: [], http2: [] };

  /** @throws FieldError at a path relative to the filter's typed_config, for a chain or route table it cannot build */
  constructor(
    readonly config: HttpConnectionManagerConfig,
    readonly deps: HttpConnectionManagerDeps,
  ) {
    this.log = deps.log.forFile(__filename);
    this.accessLogs = deps.accessLogs;
    this.clock = deps.filterContext.clock;
    this.streamLog = activeStreamLog(deps.log);
    this.connectionLogs = connectionManagerLogs(deps.log, deps.connectionLog);
    const chain = config.httpFilters;
    if (chain.length === 0 || chain[chain.length - 1].name !== ROUTER_FILTER) {
      throw new FieldError('http_filters', `the last HTTP filter must be ${ROUTER_FILTER}`);
    }
    const scope = deps.stats.scope(`http.${config.statPrefix}`);
    // With rds, what RDS brought so far, else the empty configuration (404 for every request, as Envoy's NullConfigImpl).
    const rds = config.rds;
    const routeConfig = rds === null ? config.routeConfig : (deps.routeConfigs.watch(rdsKey(rds), (routes) => this.onRouteConfig(routes)) ?? config.routeConfig);
    const filterContext = { ...deps.filterContext, scope, stats: deps.stats, routeConfig, runtime: deps.runtime, random: mathRandom, bufferLimitBytes: deps.bufferLimitBytes };
    const filters = chain.slice(0, -1).map((filter, i) => {
      const factory = filter.name === ROUTER_FILTER ? null : createHttpFilterFactory(filter, filterContext);
      if (factory === null) throw new FieldError(`http_filters[${i}].name`, `http filter '${filter.name}' is not supported before ${ROUTER_FILTER}`);
      return factory;
    });
    this.filters = filters.length === 0 ? null : filters;
    const routeTable = atField(rds === null ? 'route_config' : 'rds', () => this.routeTable(routeConfig));
    this.stats = new HttpConnectionManagerStats(scope);
    this.tracing =
      config.tracing === null
        ? null
        : new HttpTracing(config.tracing, routeConfig, {
            tracer: deps.tracer,
            operation: deps.tracingOperation,
            runtime: deps.runtime,
            random: mathRandom,
            stats: new ConnectionManagerTracingStats(scope),
            node: deps.node,
            useRemoteAddress: config.useRemoteAddress,
            environment: process.env,
          });
    // A route configuration RDS brings later may print RESPONSE_FLAGS in a header: a pooled HTTP/1
    // stream's record is made once, so one that may need it keeps it from the start.
    this.recordsStreams = this.accessLogs.length > 0 || rds !== null || routeTable.readsStreamInfo || this.tracing !== null;
    const common = config.commonHttpProtocolOptions;
    this.idleTimeouts = common.idleTimeoutMs > 0 ? new TimeoutList(this.clock, common.idleTimeoutMs, onConnectionIdle) : null;
    // Envoy keeps its codec statistics outside the connection manager's prefix.
    this.http1Settings = {
      acceptHttp10: config.httpProtocolOptions.acceptHttp10,
      defaultHostForHttp10: config.httpProtocolOptions.defaultHostForHttp10,
      maxHeadersCount: common.maxHeadersCount,
      headersWithUnderscoresAction: common.headersWithUnderscoresAction,
      stats: new Http1CodecStats(deps.stats.scope('http1')),
      properCase: config.httpProtocolOptions.headerKeyFormat === 'proper_case_words',
      enableTrailers: config.httpProtocolOptions.enableTrailers,
      bufferLimitBytes: deps.bufferLimitBytes,
      writeBatch: deps.writeBatch,
      rxBytes: this.stats.downstream_cx_rx_bytes_total,
      txBytes: { written: this.stats.downstream_cx_tx_bytes_total, buffered: this.stats.downstream_cx_tx_bytes_buffered },
      log: http1ServerLog(deps.log),
      requestHeadersTimeoutMs: config.requestHeadersTimeoutMs,
      clock: deps.filterContext.clock,
    };
    this.http2Settings = {
      options: config.http2ProtocolOptions,
      floodGuard: { limits: config.http2ProtocolOptions.floodLimits, clock: this.clock, bufferLimitBytes: deps.bufferLimitBytes },
      stats: new Http2CodecStats(deps.stats.scope('http2')),
      maxHeadersCount: common.maxHeadersCount,
      headersWithUnderscoresAction: common.headersWithUnderscoresAction,
    };
    this.streamTimers = {
      requestTimeoutMs: config.requestTimeoutMs,
      streamIdleTimeoutMs: config.streamIdleTimeoutMs,
      maxStreamDurationMs: common.maxStreamDurationMs,
    };
    this.router = {
      routeTable,
      clusters: deps.clusters,
      asyncClient: deps.asyncClient,
      stats: new RouterStats(scope),
      useRemoteAddress: config.useRemoteAddress,
      localAddress: deps.localAddress,
      bufferLimitBytes: deps.bufferLimitBytes,
      clock: deps.filterContext.clock,
      random: mathRandom,
      log: routerLog(deps.routerLog),
      upgrades: config.upgrades,
      skipXffAppend: config.skipXffAppend,
      via: config.via,
      hostname: utf8Bytes(os.hostname()),
    };
  }

  /** @throws FieldError at a path relative to the route configuration (a domain twice, a body file it cannot read) */
  private routeTable(routes: RouteConfiguration): RouteTable {
    return new RouteTable(routes, this.deps.runtime, mathRandom, this.deps.stats.scope('vhost'));
  }

  /**
   * RDS brought a new route configuration: requests routed from now on take its routes, those in
   * flight keep theirs, and no connection is closed. Each filter prepares its per-route configs
   * before the table that leads to them serves.
   */
  private onRouteConfig(routes: RouteConfiguration): void {
    let table: RouteTable;
    try {
      table = this.routeTable(routes);
    } catch (error) {
      // The supervisor built the same table before it sent it: only a body file gone since fails here.
      this.log.error(`rds: route configuration '${routes.name}' cannot be served: ${(error as Error).message}; the previous one still serves`);
      return;
    }
    for (const filter of this.filters ?? []) filter.prepareRoutes?.(routes);
    this.tracing?.prepareRoutes(routes);
    this.router.routeTable = table;
  }

  /**
   * The codec: codec_type, else ALPN `h2` on a TLS connection, else HTTP/2 prior knowledge when
   * the client opens with the connection preface (as Envoy's AUTO), else HTTP/1.
   */
  onNewConnection(socket: net.Socket, id: number): void {
    const acceptedMs = performance.now();
    const codec = this.config.codecType;
    if (codec === 'HTTP1') this.start(socket, acceptedMs, id, false);
    else if (codec === 'HTTP2' || (socket as tls.TLSSocket).alpnProtocol === 'h2') this.start(socket, acceptedMs, id, true);
    else {
      // The connection's timeouts run while the codec is not known yet; the first to end stops sniffing.
      const { idleTimeoutMs, maxConnectionDurationMs } = this.config.commonHttpProtocolOptions;
      const idleFirst = idleTimeoutMs > 0 && (maxConnectionDurationMs === 0 || idleTimeoutMs <= maxConnectionDurationMs);
      const timeout = idleFirst ? idleTimeoutMs : maxConnectionDurationMs;
      sniffHttp2Preface(socket, this.clock, timeout, (http2, timedOut) => {
        const connection = this.start(socket, acceptedMs, id, http2);
        // A client silent through the sniffing has used up its idle time.
        if (!http2 && timedOut && idleFirst) connection.onIdleTimeout();
      });
    }
  }

  private start(socket: net.Socket, acceptedMs: number, id: number, http2: boolean): ConnectionManager {
    if (this.log.enabled('debug')) this.log.debug(`[C${id}] codec: ${http2 ? 'http2' : 'http1'}`);
    const connection = new ConnectionManager(this, socket, acceptedMs, id, http2);
    this.connections.add(connection);
    // Sniffing paused the socket and put back what it read.
    if (!http2 && socket.isPaused()) socket.resume();
    return connection;
  }

  /** A stream for `connection`'s next request: one from the pool of its protocol, else a new one. */
  takeStream(connection: ConnectionManager): ActiveStream {
    const stream = this.idleStreams[connection.codec.protocol].pop();
    if (stream === undefined) return new ActiveStream(connection);
    stream.attach(connection);
    return stream;
  }

  /** A stream's request is over: it waits in the pool for another, unless the pool is full. */
  releaseStream(stream: ActiveStream): void {
    const pool = this.idleStreams[stream.protocol];
    if (pool.length < STREAM_POOL_MAX) {
      stream.detach();
      pool.push(stream);
    } else stream.dispose();
  }

  closeIdleConnections(): void {
    for (const connection of this.connections) connection.closeIfIdle();
  }
}

function onConnectionIdle(connection: ConnectionManager): void {
  connection.onIdleTimeout();
}
