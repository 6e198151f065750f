// proxy.filters.http.cors (Envoy 1.16's CorsFilter): for a request whose route or virtual host
// has a CORS policy, a preflight (OPTIONS with Origin and Access-Control-Request-Method) from an
// allowed origin is answered here, and the response to any other request from one carries
// Access-Control-Allow-Origin. Each setting comes from the route's policy when it has it, else
// from its virtual host's; whether the policy is on (filter_enabled, shadow_enabled) is the first
// policy's. Origins are counted valid or invalid in `http.<stat_prefix>.cors.`.

import { byteStringMatcher } from '../../common/string_matcher';
import type { RandomSource } from '../../common/random';
import type { CorsPolicy, RuntimeFraction } from '../../config/model';
import { type RequestHead, type ResponseHead, setHeader } from '../../http/message';
import type { RuntimeSource } from '../../runtime/live_runtime';
import type { Counter, Scope } from '../../stats/stats';
import { headerValue } from './header_matcher';
import { FilterHeadersStatus, type HttpFilter, type HttpFilterCallbacks, type HttpFilterFactory } from './http_filter';

export class CorsFilterFactory implements HttpFilterFactory {
  readonly originValid: Counter;
  readonly originInvalid: Counter;
  /** Each policy's origin matchers, compiled once. */
  private readonly origins = new WeakMap<CorsPolicy, readonly ((origin: string) => boolean)[]>();

  /** @param scope the connection manager's `http.<stat_prefix>` */
  constructor(
    scope: Scope,
    private readonly runtime: RuntimeSource,
    private readonly random: RandomSource,
  ) {
    const cors = scope.scope('cors');
    this.originValid = cors.counter('origin_valid');
    this.originInvalid = cors.counter('origin_invalid');
  }

  createFilter(callbacks: HttpFilterCallbacks): HttpFilter {
    return new CorsFilter(this, callbacks);
  }

  /** A runtime fraction's draw; `unset` when the policy has none. */
  enabled(fraction: RuntimeFraction | undefined, unset: boolean): boolean {
    return fraction === undefined ? unset : this.runtime.snapshot().featureEnabled(fraction.runtimeKey, fraction.defaultValue, this.random());
  }

  /** Whether `origin` is one of `policy`'s; a matcher that takes `*` allows every origin, as in Envoy. */
  originAllowed(policy: CorsPolicy, origin: string): boolean {
    let matchers = this.origins.get(policy);
    if (matchers === undefined) this.origins.set(policy, (matchers = policy.allowOrigins.map((m) => byteStringMatcher(m))));
    return matchers.some((matches) => matches('*') || matches(origin));
  }
}

class CorsFilter implements HttpFilter {
  /** The allowed origin of the current request, when it is a CORS request; null otherwise. */
  private origin: string | null = null;
  /** The route's and the virtual host's policies of the current CORS request. */
  private policies: readonly (CorsPolicy | undefined)[] = [];

  constructor(
    private readonly factory: CorsFilterFactory,
    private readonly callbacks: HttpFilterCallbacks,
  ) {}

  decodeHeaders(head: RequestHead): FilterHeadersStatus {
    this.origin = null;
    const entry = this.callbacks.route();
    // Only a route to a cluster has a policy of its own and a virtual host's to fall back on.
    if (entry === null || entry.route.action.kind !== 'route') return FilterHeadersStatus.Continue;
    // Most routes have no policy: they cost two reads, nothing allocated.
    const first = entry.route.action.cors ?? entry.virtualHost.cors;
    if (first === undefined) return FilterHeadersStatus.Continue;
    const policies = [entry.route.action.cors, entry.virtualHost.cors];
    const factory = this.factory;
    const enabled = factory.enabled(first.filterEnabled, true);
    const shadow = factory.enabled(first.shadowEnabled, false);
    if (!enabled && !shadow) return FilterHeadersStatus.Continue;
    const origin = headerValue(head, 'origin');
    if (origin === undefined || origin === '') return FilterHeadersStatus.Continue;
    const allowing = policies.find((policy) => policy !== undefined && policy.allowOrigins.length > 0);
    if (allowing === undefined || !factory.originAllowed(allowing, origin)) {
      factory.originInvalid.inc();
      return FilterHeadersStatus.Continue;
    }
    factory.originValid.inc();
    // Shadow mode judges and counts; it changes nothing.
    if (!enabled) return FilterHeadersStatus.Continue;
    this.origin = origin;
    this.policies = policies;
    if (head.method !== 'OPTIONS' || !headerValue(head, 'access-control-request-method')) return FilterHeadersStatus.Continue;
    // A preflight: answered here, as the policy allows; encodeHeaders adds the origin, as to any response.
    const headers: string[] = [];
    const methods = this.setting((policy) => policy.allowMethods || undefined);
    if (methods !== undefined) headers.push('access-control-allow-methods', methods);
    const allowHeaders = this.setting((policy) => policy.allowHeaders || undefined);
    if (allowHeaders !== undefined) headers.push('access-control-allow-headers', allowHeaders);
    const maxAge = this.setting((policy) => policy.maxAge || undefined);
    if (maxAge !== undefined) headers.push('access-control-max-age', maxAge);
    this.callbacks.sendLocalReply(200, '', headers);
    return FilterHeadersStatus.StopIteration;
  }

  /** Every response to a CORS request, the preflight's included, names the origin allowed. */
  encodeHeaders(head: ResponseHead): FilterHeadersStatus {
    const origin = this.origin;
    if (origin === null) return FilterHeadersStatus.Continue;
    const headers = head.headers;
    setHeader(headers, 'access-control-allow-origin', origin);
    if (this.setting((policy) => policy.allowCredentials) === true) setHeader(headers, 'access-control-allow-credentials', 'true');
    const expose = this.setting((policy) => policy.exposeHeaders || undefined);
    if (expose !== undefined) setHeader(headers, 'access-control-expose-headers', expose);
    return FilterHeadersStatus.Continue;
  }

  /** A setting from the most specific policy that has it. */
  private setting<T>(read: (policy: CorsPolicy) => T | undefined): T | undefined {
    for (const policy of this.policies) {
      const value = policy === undefined ? undefined : read(policy);
      if (value !== undefined) return value;
    }
    return undefined;
  }
}
