// proxy.filters.http.local_ratelimit (Envoy 1.16's local rate limit filter): while the filter is
// enabled (filter_enabled, off unless set) each request takes a token of its bucket; one that
// finds none is counted, and when the limit is enforced (filter_enforced) answered with the
// configured status (429 by default), body `local_rate_limited`, response_headers_to_add and
// x-proxy-ratelimited. The bucket is the route's most specific typed_per_filter_config entry's,
// else the filter's own. Each worker has its buckets: N workers let N times the rate through.
// Counted in `<stat_prefix>.http_local_rate_limit.` (enabled, ok, rate_limited, enforced), the
// stat_prefix of the config that decided.

import type { Clock } from '../../common/clock';
import type { RandomSource } from '../../common/random';
import type { LocalRateLimitConfig, RouteConfiguration, RuntimeFraction } from '../../config/model';
import { LOCAL_RATELIMIT } from '../../config/names';
import type { RuntimeSource } from '../../runtime/live_runtime';
import type { Counter, Scope } from '../../stats/stats';
import { ResponseFlag } from '../../stream_info/response_flags';
import { FilterHeadersStatus, type HttpFilter, type HttpFilterCallbacks, type HttpFilterFactory } from './http_filter';
import type { HttpFilterFactoryContext } from './http_filter_registry';
import { mostSpecificPerFilterConfig, perFilterConfigsOf } from './per_filter_config';
import { TokenBucket } from './token_bucket';

/** What Envoy's rate limit filters tell a client they limited, so that a proxy in front does not retry. */
const RATE_LIMITED_HEADERS = ['x-proxy-ratelimited', 'true'];

/** One LocalRateLimit at run time: its bucket, its counters and its reply. */
class LocalRateLimiter {
  readonly enabled: Counter;
  readonly ok: Counter;
  readonly rateLimited: Counter;
  readonly enforced: Counter;
  readonly bucket: TokenBucket;
  /** The reply's headers beyond the local reply's own. */
  readonly replyHeaders: readonly string[];

  constructor(
    readonly config: LocalRateLimitConfig,
    stats: Scope,
    clock: Clock,
  ) {
    const scope = stats.scope(`${config.statPrefix}.http_local_rate_limit`);
    this.enabled = scope.counter('enabled');
    this.ok = scope.counter('ok');
    this.rateLimited = scope.counter('rate_limited');
    this.enforced = scope.counter('enforced');
    this.bucket = new TokenBucket(config.tokenBucket, clock);
    this.replyHeaders = [...config.responseHeaders, ...RATE_LIMITED_HEADERS];
  }
}

export class LocalRateLimitFilterFactory implements HttpFilterFactory {
  private readonly runtime: RuntimeSource;
  private readonly random: RandomSource;
  private readonly limiter: LocalRateLimiter;
  /**
   * The route configurations' typed_per_filter_config entries, each with a bucket of its own, made
   * once (as Envoy makes them with the routes: a new RDS configuration starts them full); gone with the routes.
   */
  private readonly routeLimiters = new WeakMap<LocalRateLimitConfig, LocalRateLimiter>();
  private readonly stats: Scope;
  private readonly clock: Clock;

  constructor(config: LocalRateLimitConfig, context: HttpFilterFactoryContext) {
    this.runtime = context.runtime;
    this.random = context.random;
    this.stats = context.stats;
    this.clock = context.clock;
    this.limiter = new LocalRateLimiter(config, context.stats, context.clock);
    this.prepareRoutes(context.routeConfig);
  }

  prepareRoutes(routeConfig: RouteConfiguration): void {
    for (const entry of perFilterConfigsOf(routeConfig, LOCAL_RATELIMIT)) this.routeLimiters.set(entry, new LocalRateLimiter(entry, this.stats, this.clock));
  }

  createFilter(callbacks: HttpFilterCallbacks): HttpFilter {
    return new LocalRateLimitFilter(this, callbacks);
  }

  /** The limiter of a request: its route's most specific one, else the filter's. */
  limiterFor(callbacks: HttpFilterCallbacks): LocalRateLimiter {
    const config = mostSpecificPerFilterConfig(callbacks.route(), LOCAL_RATELIMIT);
    // Every entry of the route configuration has its limiter.
    return config === undefined ? this.limiter : this.routeLimiters.get(config)!;
  }

  /** A runtime fraction's draw; false when the config has none. */
  drawn(fraction: RuntimeFraction | undefined): boolean {
    return fraction !== undefined && this.runtime.snapshot().featureEnabled(fraction.runtimeKey, fraction.defaultValue, this.random());
  }
}

class LocalRateLimitFilter implements HttpFilter {
  constructor(
    private readonly factory: LocalRateLimitFilterFactory,
    private readonly callbacks: HttpFilterCallbacks,
  ) {}

  decodeHeaders(): FilterHeadersStatus {
    const factory = this.factory;
    const limiter = factory.limiterFor(this.callbacks);
    if (!factory.drawn(limiter.config.filterEnabled)) return FilterHeadersStatus.Continue;
    limiter.enabled.inc();
    if (limiter.bucket.take()) {
      limiter.ok.inc();
      return FilterHeadersStatus.Continue;
    }
    limiter.rateLimited.inc();
    if (!factory.drawn(limiter.config.filterEnforced)) return FilterHeadersStatus.Continue;
    limiter.enforced.inc();
    this.callbacks.info?.setResponseFlag(ResponseFlag.RateLimited);
    this.callbacks.sendLocalReply(limiter.config.status, 'local_rate_limited', limiter.replyHeaders, 'local_rate_limited');
    return FilterHeadersStatus.StopIteration;
  }
}
