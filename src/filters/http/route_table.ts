// Route selection for the HTTP connection manager (Envoy's RouteMatcher): a virtual host by
// the request's authority, then its first route whose match accepts the request.
//
// Virtual host precedence is Envoy's: an exact domain, then the longest `*suffix` wildcard,
// then the longest `prefix*` wildcard, then `*`. A wildcard never matches the empty string
// (`*.foo.com` does not match `.foo.com`). When nothing matches the authority as given and it
// carries a port, the lookup is repeated without the port. The router asks once for a request's
// virtual cluster, which only a virtual host with virtual clusters looks for.

import { atField, FieldError } from '../../config/errors';
import { readDirectResponseBody } from './direct_response_body';
import type { RegexMatchAndSubstitute, Route, RouteConfiguration, RuntimeFraction, VirtualHost, WeightedCluster, WeightedClusters } from '../../config/model';
import { Substitution } from '../../regex/substitution';
import { chains, type HeaderMutationChains, levelMutators, NO_MUTATIONS } from './header_mutation_chains';
import type { RuntimeSource } from '../../runtime/live_runtime';
import { pickWeightedCluster } from './weighted_clusters';
import { type PeerCertificateFacts, RouteMatcher } from './route_match';
import { isPlainPathMatch, PathIndex } from './path_index';
import type { RequestHead } from '../../http/message';
import type { RandomSource } from '../../common/random';
import type { Scope } from '../../stats/stats';
import { VirtualClusters } from './virtual_clusters';
import type { VirtualClusterStats } from './virtual_cluster_stats';

/** What the router knows of a request beyond its head, asked only when a virtual host requires TLS. */
export interface RequestFacts {
  /** The scheme x-forwarded-proto gives, as the connection manager sets it. */
  forwardedProto(head: RequestHead): string;
  /** Whether the request comes from inside the trusted network (Envoy's x-envoy-internal). */
  isInternal(): boolean;
  /** The downstream's TLS session, for a tls_context match; null on a plaintext connection. */
  peerCertificate(): PeerCertificateFacts | null;
}

/** Envoy's SslRedirectRoute: the request's own URL over https, 301. */
const SSL_REDIRECT: Route = {
  name: '',
  match: { prefix: '', caseSensitive: true, headers: [], queryParameters: [], grpc: false },
  action: { kind: 'redirect', scheme: 'https', host: null, port: null, path: null, prefixRewrite: null, status: 301, stripQuery: false },
};

/** A route with its match compiled for the per-request test. */
class CompiledRoute {
  private readonly matcher: RouteMatcher;

  constructor(readonly route: Route) {
    this.matcher = new RouteMatcher(route.match);
  }

  /** The request first; then runtime_fraction, a fresh draw per request (Envoy uses the stream id). */
  matches(head: RequestHead, facts: RequestFacts, runtime: RuntimeSource, random: RandomSource): boolean {
    if (!this.matcher.matches(head, () => facts.peerCertificate())) return false;
    const fraction = this.route.match.runtimeFraction;
    return fraction === undefined || runtime.snapshot().featureEnabled(fraction.runtimeKey, fraction.defaultValue, random());
  }
}

/** Consecutive routes that test the path alone are looked up together once there are this many. */
const MIN_INDEXED_RUN = 4;

class CompiledVirtualHost {
  readonly routes: readonly CompiledRoute[];
  /** The routes in order, runs of plain path matches gathered into an index. */
  private readonly segments: readonly (CompiledRoute | PathIndex<CompiledRoute>)[];

  /** @param path `virtual_hosts[v]`, for the errors of its routes */
  constructor(readonly virtualHost: VirtualHost, path: string) {
    this.routes = virtualHost.routes.map((r, i) => new CompiledRoute(atField(`${path}.routes[${i}]`, () => withFileBody(r))));
    this.segments = segmentsOf(this.routes);
  }

  /** The first route that matches; one left out by its runtime_fraction falls to the next. */
  route(head: RequestHead, facts: RequestFacts, runtime: RuntimeSource, random: RandomSource): Route | null {
    for (const segment of this.segments) {
      if (segment instanceof PathIndex) {
        const found = segment.first(head.path);
        if (found !== undefined) return found.route;
      } else if (segment.matches(head, facts, runtime, random)) return segment.route;
    }
    return null;
  }
}

function segmentsOf(routes: readonly CompiledRoute[]): (CompiledRoute | PathIndex<CompiledRoute>)[] {
  const segments: (CompiledRoute | PathIndex<CompiledRoute>)[] = [];
  let run: CompiledRoute[] = [];
  const endRun = (): void => {
    if (run.length >= MIN_INDEXED_RUN) segments.push(new PathIndex(run, run.map((r) => r.route.match)));
    else segments.push(...run);
    run = [];
  };
  for (const route of routes) {
    if (isPlainPathMatch(route.route.match)) {
      run.push(route);
      continue;
    }
    endRun();
    segments.push(route);
  }
  endRun();
  return segments;
}

/** A route action's regex rewrites, compiled; null where it has none. */
export interface RegexRewrites {
  readonly path: Substitution | null;
  readonly host: Substitution | null;
}

function regexRewritesOf(route: Route): RegexRewrites | null {
  const action = route.action;
  if (action.kind !== 'route' || (action.regexRewrite === undefined && action.hostRewritePathRegex === undefined)) return null;
  const compile = (config: RegexMatchAndSubstitute | undefined): Substitution | null => (config === undefined ? null : Substitution.compile(config.regex, config.substitution));
  return { path: compile(action.regexRewrite), host: compile(action.hostRewritePathRegex) };
}

/** Wildcard domains by length of their fixed part, longest first. */
type Wildcards = readonly (readonly [number, ReadonlyMap<string, CompiledVirtualHost>])[];

export class RouteTable {
  private readonly exact = new Map<string, CompiledVirtualHost>();
  private readonly suffixes: Wildcards;
  private readonly prefixes: Wildcards;
  private readonly defaultHost: CompiledVirtualHost | null = null;
  /** By route, and by weighted cluster entry (whose mutations apply before its route's). */
  private readonly mutations = new Map<Route | WeightedCluster, HeaderMutationChains>();
  /** The routes whose virtual host counts attempts, with that virtual host; most tables have none. */
  private readonly countingHosts = new Map<Route, VirtualHost>();
  /** Every route's virtual host, for the filters that read its settings (CORS). */
  private readonly hosts = new Map<Route, VirtualHost>();
  /** The routes whose virtual host has virtual clusters, with those; most tables have none. */
  private readonly virtualClusters = new Map<Route, VirtualClusters>();
  /** internal_only_headers; null when there are none. */
  readonly internalOnlyHeaders: ReadonlySet<string> | null;
  /** The regex rewrites of the routes that have some, compiled. */
  private readonly rewrites = new Map<Route, RegexRewrites>();

  /**
   * @param vhostScope `vhost`: where the virtual clusters' statistics go
   * @throws FieldError at `virtual_hosts[v].domains[d]` (relative to the route configuration) for a
   *   domain claimed twice, at `virtual_hosts[v].routes[r].direct_response.body.filename` for a body file it cannot use
   */
  constructor(
    config: RouteConfiguration,
    private readonly runtime: RuntimeSource,
    private readonly random: RandomSource,
    vhostScope: Scope,
  ) {
    const suffixes = new Map<number, Map<string, CompiledVirtualHost>>();
    const prefixes = new Map<number, Map<string, CompiledVirtualHost>>();
    const seen = new Set<string>();
    const global = levelMutators(config);
    const mostSpecificWins = config.mostSpecificHeaderMutationsWins === true;
    this.internalOnlyHeaders = config.internalOnlyHeaders === undefined ? null : new Set(config.internalOnlyHeaders);
    for (const [v, vh] of config.virtualHosts.entries()) {
      const compiled = new CompiledVirtualHost(vh, `virtual_hosts[${v}]`);
      const host = levelMutators(vh);
      const virtualClusters = new VirtualClusters(vh.virtualClusters ?? [], vhostScope.scope(`${vh.name}.vcluster`));
      for (const { route } of compiled.routes) {
        this.hosts.set(route, vh);
        if (vh.includeRequestAttemptCount === true || vh.includeAttemptCountInResponse === true) this.countingHosts.set(route, vh);
        if (vh.virtualClusters !== undefined) this.virtualClusters.set(route, virtualClusters);
        const rewrites = regexRewritesOf(route);
        if (rewrites !== null) this.rewrites.set(route, rewrites);
        const own = chains([levelMutators(route), host, global], mostSpecificWins);
        if (own !== NO_MUTATIONS) this.mutations.set(route, own);
        const weighted = route.action.kind === 'route' ? (route.action.weightedClusters?.clusters ?? []) : [];
        for (const entry of weighted) {
          const entryChains = chains([levelMutators(entry)], false);
          if (entryChains !== NO_MUTATIONS) this.mutations.set(entry, entryChains);
        }
      }
      for (const [d, raw] of vh.domains.entries()) {
        const domain = raw.toLowerCase();
        // Envoy's RouteMatcher words, so that an operator finds them in its documentation.
        if (seen.has(domain)) {
          throw new FieldError(
            `virtual_hosts[${v}].domains[${d}]`,
            domain === '*'
              ? `Only a single wildcard domain is permitted in route ${config.name}`
              : `Only unique values for domains are permitted. Duplicate entry of domain ${domain} in route ${config.name}`,
          );
        }
        seen.add(domain);
        if (domain === '*') {
          this.defaultHost = compiled;
        } else if (domain.startsWith('*')) {
          addWildcard(suffixes, domain.slice(1), compiled);
        } else if (domain.endsWith('*')) {
          addWildcard(prefixes, domain.slice(0, -1), compiled);
        } else {
          this.exact.set(domain, compiled);
        }
      }
    }
    this.suffixes = byLengthDescending(suffixes);
    this.prefixes = byLengthDescending(prefixes);
  }

  /** The compiled regex_rewrite and host_rewrite_path_regex of a route `route()` returned whose action has either. */
  regexRewrites(route: Route): RegexRewrites {
    return this.rewrites.get(route)!;
  }

  /** The virtual host of a route `route()` returned. */
  virtualHostOf(route: Route): VirtualHost {
    return this.hosts.get(route)!;
  }

  /** The virtual host of a route `route()` returned, when that virtual host counts attempts. */
  attemptCountingHost(route: Route): VirtualHost | undefined {
    return this.countingHosts.size === 0 ? undefined : this.countingHosts.get(route);
  }

  /**
   * The virtual cluster of a request `route()` gave `route`, when its virtual host has virtual
   * clusters (its catch-all when none matches); null when it has none.
   */
  virtualCluster(route: Route, head: RequestHead): VirtualClusterStats | null {
    if (this.virtualClusters.size === 0) return null;
    return this.virtualClusters.get(route)?.match(head) ?? null;
  }

  /** Whether a header value of any route reads the stream's record (RESPONSE_FLAGS, RESPONSE_CODE_DETAILS). */
  get readsStreamInfo(): boolean {
    for (const chains of this.mutations.values()) {
      if (chains.request.some((m) => m.readsStreamInfo) || chains.response.some((m) => m.readsStreamInfo)) return true;
    }
    return false;
  }

  /** Whether any route, virtual host or the configuration itself mutates headers. */
  get hasHeaderMutations(): boolean {
    return this.mutations.size > 0;
  }

  /** The header mutations of a route (or of a weighted cluster entry) `route()` or `weightedCluster()` returned. */
  headerMutations(routeOrEntry: Route | WeightedCluster): HeaderMutationChains {
    return this.mutations.get(routeOrEntry) ?? NO_MUTATIONS;
  }

  /** Whether one request falls in `fraction` (a mirror policy's), by a fresh draw. */
  drawFraction(fraction: RuntimeFraction): boolean {
    return this.runtime.snapshot().featureEnabled(fraction.runtimeKey, fraction.defaultValue, this.random());
  }

  /** The cluster of a weighted_clusters route for one request, by a fresh draw. */
  weightedCluster(weighted: WeightedClusters): WeightedCluster {
    return pickWeightedCluster(weighted, this.runtime.snapshot(), this.random());
  }

  /**
   * The route for a request; null when no virtual host or no route matches (a 404). A virtual
   * host that requires TLS of this request answers with a redirect to https first.
   */
  route(head: RequestHead, facts: RequestFacts): Route | null {
    const vh = this.virtualHost(head.authority);
    if (vh === null) return null;
    const required = vh.virtualHost.requireTls;
    if (required !== 'NONE' && facts.forwardedProto(head) !== 'https' && (required === 'ALL' || !facts.isInternal())) return SSL_REDIRECT;
    return vh.route(head, facts, this.runtime, this.random);
  }

  private virtualHost(authority: string): CompiledVirtualHost | null {
    if (this.exact.size === 0 && this.suffixes.length === 0 && this.prefixes.length === 0) return this.defaultHost;
    const host = authority.toLowerCase();
    const found = this.findDomain(host);
    if (found !== null) return found;
    const portless = stripPort(host);
    if (portless !== host) {
      const withoutPort = this.findDomain(portless);
      if (withoutPort !== null) return withoutPort;
    }
    return this.defaultHost;
  }

  private findDomain(host: string): CompiledVirtualHost | null {
    return (
      this.exact.get(host) ??
      findWildcard(this.suffixes, host, (h, n) => h.slice(h.length - n)) ??
      findWildcard(this.prefixes, host, (h, n) => h.slice(0, n))
    );
  }
}

/** The route with its direct response's file read into its body. */
function withFileBody(route: Route): Route {
  const action = route.action;
  if (action.kind !== 'direct_response' || action.bodyFile === null) return route;
  const file = action.bodyFile;
  const body = atField('direct_response.body.filename', () => readDirectResponseBody(file));
  return { ...route, action: { ...action, body, bodyFile: null } };
}

function addWildcard(index: Map<number, Map<string, CompiledVirtualHost>>, fixed: string, vh: CompiledVirtualHost): void {
  let sameLength = index.get(fixed.length);
  if (sameLength === undefined) {
    sameLength = new Map();
    index.set(fixed.length, sameLength);
  }
  sameLength.set(fixed, vh);
}

function byLengthDescending(index: Map<number, Map<string, CompiledVirtualHost>>): Wildcards {
  return [...index.entries()].sort((a, b) => b[0] - a[0]);
}

function findWildcard(
  wildcards: Wildcards,
  host: string,
  fixedPart: (host: string, length: number) => string,
): CompiledVirtualHost | null {
  for (const [length, domains] of wildcards) {
    // The wildcard must match at least one character.
    if (length >= host.length) continue;
    const vh = domains.get(fixedPart(host, length));
    if (vh !== undefined) return vh;
  }
  return null;
}

/** `host:port` -> `host`, `[v6]:port` -> `[v6]`; anything else unchanged. */
function stripPort(host: string): string {
  const colon = host.lastIndexOf(':');
  if (colon < 0) return host;
  if (host.startsWith('[')) return host.charCodeAt(colon - 1) === 0x5d /* ']' */ ? host.slice(0, colon) : host;
  return host.indexOf(':') === colon ? host.slice(0, colon) : host;
}
