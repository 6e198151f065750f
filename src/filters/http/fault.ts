// proxy.filters.http.fault (Envoy 1.16's FaultFilter): for a request its settings target (upstream
// cluster, downstream node, header matchers), a delay holds the request before it goes on, an
// abort answers it (HTTP status, or gRPC status in a trailers-only answer), and a response rate
// limit lets the response body out slowly. Each is decided per request against its percentage,
// which runtime keys override (per downstream cluster too); max_active_faults bounds the
// requests being faulted at once. A route's own HTTPFault (typed_per_filter_config) replaces the
// filter's. Counted in `http.<stat_prefix>.fault.`.

import type { Clock, Timer } from '../../common/clock';
import type { RandomSource } from '../../common/random';
import type { FaultConfig, FractionalPercent, RouteConfiguration } from '../../config/model';
import { FAULT } from '../../config/names';
import { firstHeaderValue, type RequestHead } from '../../http/message';
import type { RuntimeSource } from '../../runtime/live_runtime';
import type { Runtime } from '../../runtime/runtime';
import type { Counter, Gauge, Scope } from '../../stats/stats';
import { ResponseFlag } from '../../stream_info/response_flags';
import { abortGrpcStatus, abortHttpStatus, abortPercentage, delayMs, delayPercentage, rateKbps, rateLimitPercentage } from './fault_providers';
import { HeaderMatcher, matchAll } from './header_matcher';
import { FilterDataStatus, FilterHeadersStatus, type HttpFilter, type HttpFilterCallbacks, type HttpFilterFactory, routeClusterName } from './http_filter';
import { mostSpecificPerFilterConfig, perFilterConfigsOf } from './per_filter_config';
import { StreamRateLimiter } from './stream_rate_limiter';

/** Where a downstream cluster's own overrides live: `fault.http.<cluster>.`. */
const DOWNSTREAM_KEY_PREFIX = 'fault.http.';

/** A fault configuration made ready for requests: its header matchers compiled once. */
export class FaultSettings {
  readonly matchers: readonly HeaderMatcher[];
  /** Every fault configured is at 0% (a header's percentage is capped by it): only the runtime can turn one on. */
  private readonly offUnlessRuntime: boolean;
  /** The runtime snapshot `quiet` was worked out for. */
  private quietFor: Runtime | null = null;
  private quiet = false;

  constructor(readonly config: FaultConfig) {
    this.matchers = config.headers.map((match) => new HeaderMatcher(match));
    const percentages = [config.delay?.percentage, config.abort?.percentage, config.responseRateLimit?.percentage];
    this.offUnlessRuntime = percentages.every((percentage) => percentage === undefined || percentage.numerator === 0);
  }

  /**
   * No request can be faulted under `runtime`: every percentage is 0 and the snapshot has no key
   * that overrides one. Worked out once per snapshot, so that a filter kept in the chain for the
   * day an operator turns a fault on costs a request next to nothing meanwhile.
   */
  injectsNothingUnder(runtime: Runtime): boolean {
    if (this.quietFor !== runtime) {
      const keys = this.config.runtimeKeys;
      this.quietFor = runtime;
      this.quiet =
        this.offUnlessRuntime &&
        !runtime.has(keys.delayPercent) &&
        !runtime.has(keys.abortPercent) &&
        !runtime.has(keys.responseRateLimitPercent) &&
        !runtime.hasKeyWithPrefix(DOWNSTREAM_KEY_PREFIX);
    }
    return this.quiet;
  }
}

export interface FaultFilterContext {
  readonly scope: Scope;
  /** The connection manager's routes, whose typed_per_filter_config HTTPFaults are prepared once. */
  readonly routeConfig: RouteConfiguration;
  readonly runtime: RuntimeSource;
  readonly random: RandomSource;
  readonly clock: Clock;
  /** The listener's per_connection_buffer_limit_bytes: how much response the rate limiter holds before the upstream waits. */
  readonly bufferLimitBytes: number;
}

export class FaultFilterFactory implements HttpFilterFactory {
  readonly settings: FaultSettings;
  /** Each per-route HTTPFault of the connection manager's route configurations, prepared; gone with the routes. */
  readonly routeSettings = new WeakMap<FaultConfig, FaultSettings>();
  readonly delaysInjected: Counter;
  readonly abortsInjected: Counter;
  readonly responseRlInjected: Counter;
  readonly faultsOverflow: Counter;
  readonly activeFaults: Gauge;
  /** `http.<stat_prefix>.fault.`, for the per-downstream-cluster counters. */
  readonly scope: Scope;

  constructor(
    config: FaultConfig,
    readonly context: FaultFilterContext,
  ) {
    this.settings = new FaultSettings(config);
    this.prepareRoutes(context.routeConfig);
    const scope = (this.scope = context.scope.scope('fault'));
    this.delaysInjected = scope.counter('delays_injected');
    this.abortsInjected = scope.counter('aborts_injected');
    this.responseRlInjected = scope.counter('response_rl_injected');
    this.faultsOverflow = scope.counter('faults_overflow');
    this.activeFaults = scope.gauge('active_faults');
  }

  prepareRoutes(routeConfig: RouteConfiguration): void {
    for (const route of perFilterConfigsOf(routeConfig, FAULT)) this.routeSettings.set(route, new FaultSettings(route));
  }

  createFilter(callbacks: HttpFilterCallbacks): HttpFilter {
    return new FaultFilter(this, callbacks);
  }
}

/** Envoy's runtime keys for a downstream cluster's own overrides. */
interface DownstreamClusterKeys {
  readonly name: string;
  readonly delayPercent: string;
  readonly abortPercent: string;
  readonly delayDuration: string;
  readonly abortHttpStatus: string;
  readonly abortGrpcStatus: string;
}

class FaultFilter implements HttpFilter {
  // Per request; reset by decodeHeaders.
  private settings: FaultSettings | null = null;
  /** The request's headers, which an abort after a delay reads again. */
  private requestHeaders: readonly string[] = [];
  private downstream: DownstreamClusterKeys | null = null;
  private delayTimer: Timer | null = null;
  /** A delay is under way: the request is held. */
  private delaying = false;
  private limiter: StreamRateLimiter | null = null;
  /** This request counts in active_faults. */
  private faultActive = false;

  constructor(
    private readonly factory: FaultFilterFactory,
    private readonly callbacks: HttpFilterCallbacks,
  ) {}

  decodeHeaders(head: RequestHead): FilterHeadersStatus {
    const perRoute = mostSpecificPerFilterConfig(this.callbacks.route(), FAULT);
    const factory = this.factory;
    const settings = (this.settings = perRoute === undefined ? factory.settings : factory.routeSettings.get(perRoute)!);
    const config = settings.config;
    const runtime = factory.context.runtime.snapshot();
    if (this.overflow(runtime, config) || settings.injectsNothingUnder(runtime) || !this.targets(head, settings)) return FilterHeadersStatus.Continue;
    const headers = (this.requestHeaders = head.headers);
    const cluster = firstHeaderValue(headers, 'x-proxy-downstream-service-cluster');
    this.downstream = cluster === undefined ? null : downstreamClusterKeys(cluster);
    this.maybeLimitResponse(runtime, config, headers);
    const delay = this.delayDuration(runtime, config, headers);
    if (delay !== null) {
      this.countInjected(this.factory.delaysInjected, 'delays_injected');
      this.callbacks.info?.setResponseFlag(ResponseFlag.DelayInjected);
      this.delaying = true;
      const timer = (this.delayTimer ??= this.factory.context.clock.createTimer(() => this.afterDelay()));
      timer.enable(delay);
      return FilterHeadersStatus.StopIteration;
    }
    return this.maybeAbort(runtime, config, headers) ? FilterHeadersStatus.StopIteration : FilterHeadersStatus.Continue;
  }

  decodeData(): FilterDataStatus {
    return this.delaying ? FilterDataStatus.StopIterationAndBuffer : FilterDataStatus.Continue;
  }

  decodeComplete(): FilterHeadersStatus {
    return this.delaying ? FilterHeadersStatus.StopIteration : FilterHeadersStatus.Continue;
  }

  encodeData(chunk: Buffer): FilterDataStatus {
    if (this.limiter === null) return FilterDataStatus.Continue;
    this.limiter.writeData(chunk);
    return FilterDataStatus.StopIterationNoBuffer;
  }

  encodeComplete(): FilterHeadersStatus {
    return this.limiter === null || this.limiter.end() ? FilterHeadersStatus.Continue : FilterHeadersStatus.StopIteration;
  }

  onStreamEnd(): void {
    this.delaying = false;
    this.delayTimer?.disable();
    this.limiter?.destroy();
    this.limiter = null;
    if (this.faultActive) {
      this.faultActive = false;
      this.factory.activeFaults.dec();
    }
  }

  /** Envoy's faultOverflow: as many requests faulted as max_active_faults (or its runtime key) allows. */
  private overflow(runtime: Runtime, config: FaultConfig): boolean {
    const max = runtime.getInteger(config.runtimeKeys.maxActiveFaults, config.maxActiveFaults ?? Number.MAX_SAFE_INTEGER);
    // Without a limit the gauge, summed over every process, is not read.
    if (max === Number.MAX_SAFE_INTEGER || this.factory.activeFaults.value() < max) return false;
    this.factory.faultsOverflow.inc();
    return true;
  }

  /** The request is one the settings aim at: its upstream cluster, downstream node and headers. */
  private targets(head: RequestHead, settings: FaultSettings): boolean {
    const config = settings.config;
    if (config.upstreamCluster !== '') {
      const entry = this.callbacks.route();
      if (entry === null || routeClusterName(entry, head) !== config.upstreamCluster) return false;
    }
    if (config.downstreamNodes.length > 0) {
      const node = firstHeaderValue(head.headers, 'x-proxy-downstream-service-node');
      if (node === undefined || !config.downstreamNodes.includes(node)) return false;
    }
    return matchAll(settings.matchers, head);
  }

  private maybeLimitResponse(runtime: Runtime, config: FaultConfig, headers: readonly string[]): void {
    const limit = config.responseRateLimit;
    if (limit === null) return;
    const kbps = rateKbps(limit, headers);
    if (kbps === null || !this.enabled(runtime, config.runtimeKeys.responseRateLimitPercent, rateLimitPercentage(limit, headers))) return;
    this.activate();
    this.factory.responseRlInjected.inc();
    const callbacks = this.callbacks;
    this.limiter = new StreamRateLimiter(kbps, this.factory.context.bufferLimitBytes, this.factory.context.clock, {
      write: (chunk) => callbacks.injectEncodedData(chunk),
      onDrained: () => callbacks.continueEncoding(),
      onWatermark: (above) => (above ? callbacks.onEncoderFilterAboveWriteBufferHighWatermark() : callbacks.onEncoderFilterBelowWriteBufferLowWatermark()),
    });
  }

  /** The delay to hold the request for, in ms; null for none. */
  private delayDuration(runtime: Runtime, config: FaultConfig, headers: readonly string[]): number | null {
    const delay = config.delay;
    if (delay === null) return null;
    const downstream = this.downstream;
    const percentKey = downstream?.delayPercent ?? config.runtimeKeys.delayPercent;
    if (!this.enabled(runtime, percentKey, delayPercentage(delay, headers))) return null;
    const asked = delayMs(delay, headers);
    if (asked === null) return null;
    let ms = runtime.getInteger(config.runtimeKeys.delayDuration, asked);
    if (downstream !== null) ms = runtime.getInteger(downstream.delayDuration, ms);
    return ms > 0 ? ms : null;
  }

  /** Aborts the request when the settings say so; true when it did. */
  private maybeAbort(runtime: Runtime, config: FaultConfig, headers: readonly string[]): boolean {
    const abort = config.abort;
    if (abort === null) return false;
    const downstream = this.downstream;
    const percentKey = downstream?.abortPercent ?? config.runtimeKeys.abortPercent;
    if (!this.enabled(runtime, percentKey, abortPercentage(abort, headers))) return false;
    // An HTTP status wins over a gRPC one; a gRPC abort is a 200 carrying its grpc-status.
    let status = abortHttpStatus(abort, headers);
    let grpcStatus: number | undefined;
    if (status !== null) {
      const configured = runtime.getInteger(config.runtimeKeys.abortHttpStatus, status);
      status = downstream === null ? configured : runtime.getInteger(downstream.abortHttpStatus, status);
    } else {
      const grpc = abortGrpcStatus(abort, headers);
      if (grpc === null) return false;
      const configured = runtime.getInteger(config.runtimeKeys.abortGrpcStatus, grpc);
      grpcStatus = downstream === null ? configured : runtime.getInteger(downstream.abortGrpcStatus, grpc);
      status = 200;
    }
    this.countInjected(this.factory.abortsInjected, 'aborts_injected');
    this.callbacks.info?.setResponseFlag(ResponseFlag.FaultInjected);
    this.callbacks.sendLocalReply(status, 'fault filter abort', undefined, 'fault_filter_abort', grpcStatus);
    return true;
  }

  private afterDelay(): void {
    this.delaying = false;
    const settings = this.settings!;
    const runtime = this.factory.context.runtime.snapshot();
    // A delay may be followed by an abort.
    if (!this.maybeAbort(runtime, settings.config, this.requestHeaders)) this.callbacks.continueDecoding();
  }

  private enabled(runtime: Runtime, key: string, percentage: FractionalPercent): boolean {
    return runtime.featureEnabled(key, percentage, this.factory.context.random());
  }

  /** A fault injected: counted, per downstream cluster too, and the request counts as faulted once. */
  private countInjected(counter: Counter, name: string): void {
    const downstream = this.downstream;
    if (downstream !== null && downstream.name !== '' && !this.settings!.config.disableDownstreamClusterStats) {
      this.factory.scope.scope(downstream.name).counter(name).inc();
    }
    this.activate();
    counter.inc();
  }

  private activate(): void {
    if (this.faultActive) return;
    this.faultActive = true;
    this.factory.activeFaults.inc();
  }
}

function downstreamClusterKeys(name: string): DownstreamClusterKeys {
  return {
    name,
    delayPercent: `${DOWNSTREAM_KEY_PREFIX}${name}.delay.fixed_delay_percent`,
    abortPercent: `${DOWNSTREAM_KEY_PREFIX}${name}.abort.abort_percent`,
    delayDuration: `${DOWNSTREAM_KEY_PREFIX}${name}.delay.fixed_duration_ms`,
    abortHttpStatus: `${DOWNSTREAM_KEY_PREFIX}${name}.abort.http_status`,
    abortGrpcStatus: `${DOWNSTREAM_KEY_PREFIX}${name}.abort.grpc_status`,
  };
}
