// proxy.filters.http.health_check (Envoy 1.16's health_check.cc). A request whose headers match
// is a health check. The filter answers it itself (200, or 503 when a cluster of
// cluster_min_healthy_percentages has too few available hosts) unless in pass-through mode;
// in pass-through mode it goes upstream, and with cache_time the upstream's answer is replayed
// for the rest of the cache period. While the server fails health checks (admin
// /healthcheck/fail) every health check gets 503, and every other response through the filter
// says so with x-proxy-immediate-health-check-fail.

import type { HealthCheckConfig } from '../../config/model';
import type { Clock } from '../../common/clock';
import { hasHeader, type RequestHead, type ResponseHead, setHeader } from '../../http/message';
import type { ClusterManager } from '../../upstream/worker/cluster_manager';
import { ResponseFlag } from '../../stream_info/response_flags';
import { HeaderMatcher, matchAll } from './header_matcher';
import { FilterDataStatus, FilterHeadersStatus, type HttpFilter, type HttpFilterCallbacks, type HttpFilterFactory } from './http_filter';

const HEALTHCHECKED_CLUSTER = 'x-proxy-upstream-healthchecked-cluster';
const IMMEDIATE_FAIL = 'x-proxy-immediate-health-check-fail';
const DEGRADED = 'x-proxy-degraded';

/** What the filter reads from the server it runs in. */
export interface HealthCheckContext {
  readonly clusters: ClusterManager;
  /** The admin /healthcheck/fail state, as this process knows it. */
  healthCheckFailed(): boolean;
  /** --service-cluster (the node's cluster): the value of x-proxy-upstream-healthchecked-cluster. */
  readonly serviceCluster: string;
  readonly clock: Clock;
}

/**
 * Envoy's HealthCheckCacheManager: a timer clears the cached answer every cache_time, so an
 * answer is reused until the end of the period it was stored in. Periods are counted from the
 * cache's creation on the injected clock, which needs no timer.
 */
export class HealthCheckCache {
  private readonly startMs: number;
  private storedInPeriod = -1;
  private status = 200;
  private degraded = false;

  constructor(
    private readonly clock: Clock,
    private readonly periodMs: number,
  ) {
    this.startMs = clock.now();
  }

  /** An answer was stored during the current period. */
  useCachedResponse(): boolean {
    return this.storedInPeriod === this.period();
  }

  cachedResponse(): { readonly status: number; readonly degraded: boolean } {
    return { status: this.status, degraded: this.degraded };
  }

  setCachedResponse(status: number, degraded: boolean): void {
    this.status = status;
    this.degraded = degraded;
    this.storedInPeriod = this.period();
  }

  private period(): number {
    return Math.floor((this.clock.now() - this.startMs) / this.periodMs);
  }
}

/**
 * Envoy's rule: every listed cluster exists, and has at least its percentage of hosts healthy
 * or degraded; an empty cluster passes only with a minimum of 0.
 */
export function clustersHealthy(clusters: ClusterManager, minimums: Readonly<Record<string, number>>): boolean {
  for (const [name, minPercent] of Object.entries(minimums)) {
    const cluster = clusters.get(name);
    if (cluster === undefined) return false;
    let total = 0;
    let available = 0;
    for (const set of cluster.prioritySet.hostSetsPerPriority) {
      total += set.hosts.length;
      available += set.healthyHosts.length + set.degradedHosts.length;
    }
    if (total === 0) {
      if (minPercent === 0) continue;
      return false;
    }
    if (available < (total * minPercent) / 100) return false;
  }
  return true;
}

export class HealthCheckFilterFactory implements HttpFilterFactory {
  readonly matchers: readonly HeaderMatcher[];
  /** Null without cache_time (and always outside pass-through mode). */
  readonly cache: HealthCheckCache | null;
  readonly checksClusters: boolean;

  constructor(
    readonly config: HealthCheckConfig,
    readonly context: HealthCheckContext,
  ) {
    this.matchers = config.headers.map((h) => new HeaderMatcher(h));
    this.cache = config.passThroughMode && config.cacheTimeMs > 0 ? new HealthCheckCache(context.clock, config.cacheTimeMs) : null;
    this.checksClusters = Object.keys(config.clusterMinHealthyPercentages).length > 0;
  }

  createFilter(callbacks: HttpFilterCallbacks): HttpFilter {
    return new HealthCheckFilter(this, callbacks);
  }
}

class HealthCheckFilter implements HttpFilter {
  // Per request; reset by decodeHeaders.
  private healthCheckRequest = false;
  private handling = false;
  /** The local answer replays a cached upstream answer that was marked degraded. */
  private replyDegraded = false;

  constructor(
    private readonly factory: HealthCheckFilterFactory,
    private readonly callbacks: HttpFilterCallbacks,
  ) {}

  decodeHeaders(head: RequestHead, endStream: boolean): FilterHeadersStatus {
    const factory = this.factory;
    this.healthCheckRequest = matchAll(factory.matchers, head);
    this.replyDegraded = false;
    // Access logs (not_health_check) read it as Envoy's StreamInfo::healthCheck().
    if (this.healthCheckRequest && this.callbacks.info !== null) this.callbacks.info.healthCheck = true;
    this.handling =
      this.healthCheckRequest &&
      (!factory.config.passThroughMode || factory.context.healthCheckFailed() || (factory.cache?.useCachedResponse() ?? false));
    if (!this.handling) return FilterHeadersStatus.Continue;
    if (endStream) this.answer();
    return FilterHeadersStatus.StopIteration;
  }

  decodeData(): FilterDataStatus {
    // The body of a health check answered here is read and dropped.
    return this.handling ? FilterDataStatus.StopIterationNoBuffer : FilterDataStatus.Continue;
  }

  decodeComplete(): FilterHeadersStatus {
    if (!this.handling) return FilterHeadersStatus.Continue;
    this.answer();
    return FilterHeadersStatus.StopIteration;
  }

  encodeHeaders(head: ResponseHead): FilterHeadersStatus {
    const factory = this.factory;
    const headers = head.headers;
    if (this.healthCheckRequest) {
      // Envoy caches every answer to a health check, its own local replies included.
      factory.cache?.setCachedResponse(head.status, this.replyDegraded || hasHeader(headers, DEGRADED));
      if (this.replyDegraded) setHeader(headers, DEGRADED, '');
      setHeader(headers, HEALTHCHECKED_CLUSTER, factory.context.serviceCluster);
    } else if (factory.context.healthCheckFailed()) {
      setHeader(headers, IMMEDIATE_FAIL, 'true');
    }
    return FilterHeadersStatus.Continue;
  }

  /** Envoy's onComplete: the status, and the response code details access logs print. */
  private answer(): void {
    this.handling = false;
    const factory = this.factory;
    let status = 200;
    let details = 'health_check_ok';
    if (factory.context.healthCheckFailed()) {
      status = 503;
      details = 'health_check_failed';
    } else if (factory.cache !== null) {
      const cached = factory.cache.cachedResponse();
      status = cached.status;
      details = 'health_check_cached';
      this.replyDegraded = cached.degraded;
    } else if (factory.checksClusters) {
      const healthy = clustersHealthy(factory.context.clusters, factory.config.clusterMinHealthyPercentages);
      status = healthy ? 200 : 503;
      details = healthy ? 'health_check_ok_cluster_healthy' : 'health_check_failed_cluster_unhealthy';
    }
    if (status < 200 || status >= 300) this.callbacks.info?.setResponseFlag(ResponseFlag.FailedLocalHealthCheck);
    this.callbacks.sendLocalReply(status, '', undefined, details);
  }
}

