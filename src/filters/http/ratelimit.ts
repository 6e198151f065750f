// proxy.filters.http.ratelimit (Envoy 1.16's global rate limit filter): a request whose route
// and virtual host rate_limits make descriptors (of the filter's stage, for the request types it
// serves) is held while the rate limit service is asked about them (RateLimitService
// ShouldRateLimit, v3 or v2, over the worker's gRPC client). OVER_LIMIT answers 429 (unless the
// runtime's ratelimit.http_filter_enforcing says shadow), OK lets it go on with the service's
// request headers; a failed call lets it go on, or answers 500 with failure_mode_deny. The
// service's response headers, and the x-ratelimit-* ones when enabled, go on the response.
// Counted in `cluster.<route's cluster>.ratelimit.` (ok, over_limit, error, failure_mode_allowed).

import type { RandomSource } from '../../common/random';
import type { ClusterRouteAction, RateLimitFilterConfig, RateLimitPolicy, RouteConfiguration } from '../../config/model';
import { RATELIMIT } from '../../config/names';
import { protoSchema } from '../../config/schema';
import { GrpcStatus } from '../../http/grpc';
import type { RequestHead, ResponseHead } from '../../http/message';
import type { RuntimeSource } from '../../runtime/live_runtime';
import type { Counter } from '../../stats/stats';
import { ResponseFlag } from '../../stream_info/response_flags';
import type { AsyncRequest } from '../../upstream/worker/async_client';
import type { Cluster } from '../../upstream/worker/cluster';
import type { ClusterInfo } from '../../upstream/worker/cluster_info';
import { GrpcUnaryClient, type GrpcUnaryCallbacks } from '../../upstream/worker/grpc_unary_client';
import { FilterDataStatus, FilterHeadersStatus, type HttpFilter, type HttpFilterCallbacks, type HttpFilterFactory, type RouteEntry, routeClusterName } from './http_filter';
import type { HttpFilterFactoryContext } from './http_filter_registry';
import { mostSpecificPerFilterConfig } from './per_filter_config';
import { countsVirtualHost, type Descriptor, RateLimitPolicySet, vhRateLimitsOption } from './rate_limit_descriptors';
import { type RateLimitAnswer, RateLimitMessages } from './rate_limit_messages';
import { xRateLimitHeaders } from './x_ratelimit_headers';

const METHODS = {
  V2: 'envoy.service.ratelimit.v2.RateLimitService/ShouldRateLimit',
  V3: 'envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
} as const;
/** Envoy's runtime switches, on (100%) unless the runtime says otherwise. */
const FILTER_ENABLED = 'ratelimit.http_filter_enabled';
const FILTER_ENFORCING = 'ratelimit.http_filter_enforcing';
const ALWAYS = { numerator: 100, denominator: 'HUNDRED' } as const;
/** What Envoy's rate limit filters tell a client they limited, so that a proxy in front does not retry. */
const RATE_LIMITED_HEADERS: readonly string[] = ['x-proxy-ratelimited', 'true'];

/** `cluster.<name>.ratelimit.*`: Envoy counts the calls on the scope of the cluster the request is routed to. */
class RateLimitStats {
  readonly ok: Counter;
  readonly overLimit: Counter;
  readonly error: Counter;
  readonly failureModeAllowed: Counter;

  constructor(cluster: ClusterInfo) {
    const scope = cluster.statsScope().scope('ratelimit');
    this.ok = scope.counter('ok');
    this.overLimit = scope.counter('over_limit');
    this.error = scope.counter('error');
    this.failureModeAllowed = scope.counter('failure_mode_allowed');
  }
}

export class RateLimitFilterFactory implements HttpFilterFactory {
  readonly client: GrpcUnaryClient;
  readonly method: string;
  readonly messages: RateLimitMessages;
  /** How a limited gRPC request is answered: RESOURCE_EXHAUSTED, or 429's own (UNAVAILABLE). */
  readonly rateLimitedGrpcStatus: number | undefined;
  private readonly runtime: RuntimeSource;
  private readonly random: RandomSource;
  private readonly serviceCluster: string;
  /** Each rate_limits list of the route configurations, compiled once; gone with the routes. */
  private readonly policySets = new WeakMap<readonly RateLimitPolicy[], RateLimitPolicySet>();
  /** By cluster, made at its first call (a cluster that CDS replaces gets new ones). */
  private readonly stats = new WeakMap<ClusterInfo, RateLimitStats>();
  /** enabled(), for the descriptors' disable_key checks. */
  private readonly enabledKey = (key: string): boolean => this.enabled(key);

  constructor(
    readonly config: RateLimitFilterConfig,
    readonly context: HttpFilterFactoryContext,
  ) {
    const { service } = config;
    const initialMetadata = service.initialMetadata.length > 0 ? { initialMetadata: service.initialMetadata } : {};
    this.client = new GrpcUnaryClient(context.clusters, context.asyncClient, { clusterName: service.clusterName, timeoutMs: config.timeoutMs, ...initialMetadata });
    this.method = METHODS[service.apiVersion];
    this.messages = new RateLimitMessages(protoSchema());
    this.rateLimitedGrpcStatus = config.rateLimitedAsResourceExhausted ? GrpcStatus.ResourceExhausted : undefined;
    this.runtime = context.runtime;
    this.random = context.random;
    this.serviceCluster = context.serviceCluster;
    this.prepareRoutes(context.routeConfig);
  }

  prepareRoutes(routeConfig: RouteConfiguration): void {
    for (const policies of policyLists(routeConfig)) this.policySets.set(policies, new RateLimitPolicySet(policies));
  }

  createFilter(callbacks: HttpFilterCallbacks): HttpFilter {
    return new RateLimitFilter(this, callbacks);
  }

  /** A runtime switch of Envoy's that is on unless the runtime turns it (partly) off. */
  enabled(key: string): boolean {
    return this.runtime.snapshot().featureEnabled(key, ALWAYS, this.random());
  }

  statsOf(cluster: Cluster): RateLimitStats {
    let stats = this.stats.get(cluster.info);
    if (stats === undefined) this.stats.set(cluster.info, (stats = new RateLimitStats(cluster.info)));
    return stats;
  }

  /** The request's descriptors: its route's of the filter's stage, then its virtual host's when they count. */
  descriptors(entry: RouteEntry, action: ClusterRouteAction, head: RequestHead, routeCluster: string, remoteAddress: string): Descriptor[] {
    const out: Descriptor[] = [];
    const inputs = { head, serviceCluster: this.serviceCluster, routeCluster, remoteAddress };
    const { enabledKey: enabled } = this;
    const stage = this.config.stage;
    const own = action.rateLimits;
    if (own !== undefined) this.policySets.get(own)!.collect(stage, inputs, enabled, out);
    const host = entry.virtualHost.rateLimits;
    if (host !== undefined) {
      const option = vhRateLimitsOption(action.includeVhRateLimits === true, mostSpecificPerFilterConfig(entry, RATELIMIT));
      if (countsVirtualHost(option, own !== undefined)) this.policySets.get(host)!.collect(stage, inputs, enabled, out);
    }
    return out;
  }
}

/** Every rate_limits list of a route configuration: its virtual hosts' and their route actions'. */
function policyLists(routeConfig: RouteConfiguration): (readonly RateLimitPolicy[])[] {
  return routeConfig.virtualHosts.flatMap((virtualHost) => [
    ...(virtualHost.rateLimits === undefined ? [] : [virtualHost.rateLimits]),
    ...virtualHost.routes.flatMap((route) => (route.action.kind === 'route' && route.action.rateLimits !== undefined ? [route.action.rateLimits] : [])),
  ]);
}

const enum State {
  Idle,
  /** The service is being asked: the request is held. */
  Calling,
  Complete,
  /** The filter answered the request itself. */
  Responded,
}

class RateLimitFilter implements HttpFilter, GrpcUnaryCallbacks {
  // Per request; reset by decodeHeaders and onStreamEnd.
  private state = State.Idle;
  private call: AsyncRequest | null = null;
  private head: RequestHead | null = null;
  private cluster: Cluster | null = null;
  /** The call is being made: an answer now must not continue a request decodeHeaders has not returned yet. */
  private initiating = false;
  /** For the response, [name, value, ...]; null for none. */
  private responseHeaders: string[] | null = null;

  constructor(
    private readonly factory: RateLimitFilterFactory,
    private readonly callbacks: HttpFilterCallbacks,
  ) {}

  decodeHeaders(head: RequestHead): FilterHeadersStatus {
    this.state = State.Idle;
    this.responseHeaders = null;
    if (!this.factory.enabled(FILTER_ENABLED)) return FilterHeadersStatus.Continue;
    this.initiateCall(head);
    return this.holding() ? FilterHeadersStatus.StopIteration : FilterHeadersStatus.Continue;
  }

  decodeData(): FilterDataStatus {
    return this.state === State.Calling ? FilterDataStatus.StopIterationAndBuffer : FilterDataStatus.Continue;
  }

  decodeComplete(): FilterHeadersStatus {
    return this.state === State.Calling ? FilterHeadersStatus.StopIteration : FilterHeadersStatus.Continue;
  }

  encodeHeaders(head: ResponseHead): FilterHeadersStatus {
    if (this.responseHeaders !== null) head.headers.push(...this.responseHeaders);
    this.responseHeaders = null;
    return FilterHeadersStatus.Continue;
  }

  onStreamEnd(): void {
    this.call?.cancel();
    this.call = null;
    this.head = null;
    this.cluster = null;
    this.responseHeaders = null;
    this.state = State.Idle;
  }

  onSuccess(message: Buffer): void {
    this.complete(this.factory.messages.decodeResponse(message));
  }

  onFailure(): void {
    this.complete(null);
  }

  /** The request waits for the service, or was answered by this filter. */
  private holding(): boolean {
    return this.state === State.Calling || this.state === State.Responded;
  }

  private initiateCall(head: RequestHead): void {
    const { factory, callbacks } = this;
    const client = callbacks.trustedClient();
    const requestType = factory.config.requestType;
    if (requestType === (client.internal ? 'external' : 'internal')) return;
    // Only a route to a cluster has a rate limit policy, and only a cluster that exists counts the call.
    const entry = callbacks.route();
    if (entry === null || entry.route.action.kind !== 'route') return;
    const routeCluster = routeClusterName(entry, head);
    const cluster = factory.context.clusters.get(routeCluster);
    if (cluster === undefined) return;
    const descriptors = factory.descriptors(entry, entry.route.action, head, routeCluster, client.ip);
    if (descriptors.length === 0) return;
    this.head = head;
    this.cluster = cluster;
    this.state = State.Calling;
    this.initiating = true;
    const request = factory.client.send(factory.method, factory.messages.encodeRequest(factory.config.domain, descriptors), this);
    this.initiating = false;
    // A call that failed at once has completed already.
    if (this.state === State.Calling) this.call = request;
  }

  /** The service's answer; null for a failed call. */
  private complete(answer: RateLimitAnswer | null): void {
    const { factory, callbacks } = this;
    const cluster = this.cluster!;
    this.call = null;
    this.state = State.Complete;
    const stats = factory.statsOf(cluster);
    let headers: string[] | null = answer === null || answer.responseHeaders.length === 0 ? null : [...answer.responseHeaders];
    if (answer === null) {
      stats.error.inc();
    } else if (answer.overLimit) {
      stats.overLimit.inc();
      // Envoy charges the limited request to the cluster as an internal 429 from it.
      cluster.info.stats.chargeResponseCode(429, true);
    } else {
      stats.ok.inc();
    }
    if (answer !== null && factory.config.xRateLimitHeaders) {
      const limits = xRateLimitHeaders(answer.statuses);
      if (limits.length > 0) (headers ??= []).push(...limits);
    }
    if (answer !== null && answer.overLimit && factory.enabled(FILTER_ENFORCING)) {
      this.state = State.Responded;
      callbacks.info?.setResponseFlag(ResponseFlag.RateLimited);
      const replyHeaders = headers === null ? RATE_LIMITED_HEADERS : [...headers, ...RATE_LIMITED_HEADERS];
      callbacks.sendLocalReply(429, '', replyHeaders, 'request_rate_limited', factory.rateLimitedGrpcStatus);
      return;
    }
    if (answer === null) {
      if (factory.config.failureModeDeny) {
        this.state = State.Responded;
        callbacks.info?.setResponseFlag(ResponseFlag.RateLimitServiceError);
        callbacks.sendLocalReply(500, '', undefined, 'rate_limiter_error');
        return;
      }
      stats.failureModeAllowed.inc();
    }
    this.responseHeaders = headers;
    if (this.initiating) return;
    if (answer !== null && answer.requestHeaders.length > 0) this.head!.headers.push(...answer.requestHeaders);
    callbacks.continueDecoding();
  }
}
