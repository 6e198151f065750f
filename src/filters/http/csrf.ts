// proxy.filters.http.csrf (Envoy 1.16's CsrfFilter): a request that may change state (POST, PUT,
// DELETE, PATCH) must come from the origin it goes to. Its source origin is the host and port of
// its Origin header, else of its Referer; its destination is its Host (:authority). A request
// without a source origin, or from another one that is not among the policy's
// additional_origins, gets 403 `Invalid origin`, unless the policy only shadows (filter_enabled
// off, shadow_enabled on), which judges and counts and lets it go. The policy is the route's most
// specific typed_per_filter_config entry, else the filter's own. Counted in
// `http.<stat_prefix>.csrf.`.

import { byteStringMatcher } from '../../common/string_matcher';
import type { RandomSource } from '../../common/random';
import type { CsrfPolicyConfig, RouteConfiguration, RuntimeFraction } from '../../config/model';
import { CSRF } from '../../config/names';
import { parseAbsoluteUrl } from '../../http/absolute_url';
import type { RequestHead } from '../../http/message';
import type { RuntimeSource } from '../../runtime/live_runtime';
import type { Counter } from '../../stats/stats';
import { headerValue } from './header_matcher';
import { FilterHeadersStatus, type HttpFilter, type HttpFilterCallbacks, type HttpFilterFactory } from './http_filter';
import type { HttpFilterFactoryContext } from './http_filter_registry';
import { mostSpecificPerFilterConfig, perFilterConfigsOf } from './per_filter_config';

/** The methods Envoy's filter judges (isModifyMethod). */
const MUTATING_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

/** Envoy's hostAndPort: the authority of an absolute URL, else the value as it is. */
export function hostAndPort(value: string): string {
  return parseAbsoluteUrl(value)?.authority ?? value;
}

/** The request's source origin as Envoy reads it: Origin's host and port, else Referer's; '' when neither names one. */
export function sourceOrigin(head: RequestHead): string {
  return hostAndPort(headerValue(head, 'origin') ?? '') || hostAndPort(headerValue(head, 'referer') ?? '');
}

/** A policy with its additional origins compiled. */
export interface CsrfPolicy {
  readonly config: CsrfPolicyConfig;
  readonly additionalOrigins: readonly ((origin: string) => boolean)[];
}

export function compileCsrfPolicy(config: CsrfPolicyConfig): CsrfPolicy {
  return { config, additionalOrigins: config.additionalOrigins.map((m) => byteStringMatcher(m)) };
}

/** Whether `source` may change state at `destination`: the same host and port, or one of the policy's additional origins. */
export function originAllowed(policy: CsrfPolicy, source: string, destination: string): boolean {
  return source === hostAndPort(destination) || policy.additionalOrigins.some((matches) => matches(source));
}

export class CsrfFilterFactory implements HttpFilterFactory {
  readonly missingSourceOrigin: Counter;
  readonly requestInvalid: Counter;
  readonly requestValid: Counter;
  private readonly runtime: RuntimeSource;
  private readonly random: RandomSource;
  private readonly policy: CsrfPolicy;
  /** The route configurations' typed_per_filter_config policies, compiled once; gone with the routes. */
  private readonly routePolicies = new WeakMap<CsrfPolicyConfig, CsrfPolicy>();

  constructor(config: CsrfPolicyConfig, context: HttpFilterFactoryContext) {
    const stats = context.scope.scope('csrf');
    this.missingSourceOrigin = stats.counter('missing_source_origin');
    this.requestInvalid = stats.counter('request_invalid');
    this.requestValid = stats.counter('request_valid');
    this.runtime = context.runtime;
    this.random = context.random;
    this.policy = compileCsrfPolicy(config);
    this.prepareRoutes(context.routeConfig);
  }

  prepareRoutes(routeConfig: RouteConfiguration): void {
    for (const policy of perFilterConfigsOf(routeConfig, CSRF)) this.routePolicies.set(policy, compileCsrfPolicy(policy));
  }

  createFilter(callbacks: HttpFilterCallbacks): HttpFilter {
    return new CsrfFilter(this, callbacks);
  }

  /** The policy of a request: its route's most specific one, else the filter's. */
  policyFor(callbacks: HttpFilterCallbacks): CsrfPolicy {
    const config = mostSpecificPerFilterConfig(callbacks.route(), CSRF);
    // Every entry of the route configuration was compiled.
    return config === undefined ? this.policy : this.routePolicies.get(config)!;
  }

  /** A runtime fraction's draw; false when the policy has none. */
  enabled(fraction: RuntimeFraction | undefined): boolean {
    return fraction !== undefined && this.runtime.snapshot().featureEnabled(fraction.runtimeKey, fraction.defaultValue, this.random());
  }
}

class CsrfFilter implements HttpFilter {
  constructor(
    private readonly factory: CsrfFilterFactory,
    private readonly callbacks: HttpFilterCallbacks,
  ) {}

  decodeHeaders(head: RequestHead): FilterHeadersStatus {
    // Envoy settles the policy first; only a state-changing request can be judged, so it is asked first here.
    if (!MUTATING_METHODS.has(head.method)) return FilterHeadersStatus.Continue;
    const factory = this.factory;
    const policy = factory.policyFor(this.callbacks);
    const enforced = factory.enabled(policy.config.filterEnabled);
    if (!enforced && !factory.enabled(policy.config.shadowEnabled)) return FilterHeadersStatus.Continue;
    const source = sourceOrigin(head);
    // As in Envoy, a request without one is judged too (and refused even where an additional origin matches '').
    if (source === '') factory.missingSourceOrigin.inc();
    const allowed = originAllowed(policy, source, head.authority);
    if (!allowed) factory.requestInvalid.inc();
    if (source !== '' && allowed) {
      factory.requestValid.inc();
      return FilterHeadersStatus.Continue;
    }
    if (!enforced) return FilterHeadersStatus.Continue;
    this.callbacks.sendLocalReply(403, 'Invalid origin', undefined, 'csrf_origin_mismatch');
    return FilterHeadersStatus.StopIteration;
  }
}
