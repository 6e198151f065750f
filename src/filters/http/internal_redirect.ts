// Envoy 1.16's internal redirect decision (router.cc setupRedirect and
// convertRequestHeadersForInternalRedirect), apart from the router's I/O: whether an upstream
// redirect the route's policy names is followed by the proxy itself, and where to.

import type { InternalRedirectPolicy, Route } from '../../config/model';
import { ALLOW_LISTED_ROUTES, PREVIOUS_ROUTES } from '../../config/names';
import { type AbsoluteUrl, parseAbsoluteUrl } from '../../http/absolute_url';

/** Where an absolute Location points. */
export type RedirectTarget = AbsoluteUrl;

/**
 * One downstream request's internal redirects so far, across the streams they recreated: Envoy
 * keeps it in the request's filter state, which each recreated stream inherits.
 */
export class InternalRedirectHistory {
  /** Redirects followed. */
  count = 0;
  /** previous_routes: by route name, the routes it already redirected this request to. */
  private followed: Map<string, Set<string>> | null = null;

  /** Records route `from` redirecting to route `to`; false when it did already. */
  follow(from: string, to: string): boolean {
    const followed = (this.followed ??= new Map());
    let targets = followed.get(from);
    if (targets === undefined) followed.set(from, (targets = new Set()));
    if (targets.has(to)) return false;
    targets.add(to);
    return true;
  }
}

/**
 * Why a redirect the policy names goes downstream instead. The last five are the router's
 * passthrough_internal_redirect_* counters; every one counts in the cluster's
 * upstream_internal_redirect_failed_total.
 */
export type RedirectRefusal = 'request_not_complete' | 'no_location' | 'bad_location' | 'unsafe_scheme' | 'too_many_redirects' | 'no_route' | 'predicate';

export type RedirectDecision = { readonly target: RedirectTarget; readonly route: Route } | { readonly refusal: RedirectRefusal };

export interface RedirectCase {
  /** The route that sent the request upstream: its name, for the predicates. */
  readonly route: Route;
  readonly policy: InternalRedirectPolicy;
  /** The downstream request was received whole and had no body: only such a request is sent again. */
  readonly requestReplayable: boolean;
  /** The downstream request's scheme is https, as Envoy's schemeIsHttp tells it (x-forwarded-proto, then the connection). */
  readonly downstreamHttps: boolean;
  /** The response's Location; undefined when it has none. */
  readonly location: string | undefined;
  readonly history: InternalRedirectHistory;
}

/**
 * Envoy's checks in its order. On success the history counts the redirect.
 * @param routeOf the route a request for `target` takes (the route table's choice); null: none
 */
export function decideInternalRedirect(redirect: RedirectCase, routeOf: (target: RedirectTarget) => Route | null): RedirectDecision {
  if (!redirect.requestReplayable) return { refusal: 'request_not_complete' };
  if (redirect.location === undefined) return { refusal: 'no_location' };
  const target = parseAbsoluteUrl(redirect.location);
  if (target === null) return { refusal: 'bad_location' };
  const { policy, history, downstreamHttps } = redirect;
  if (!policy.allowCrossSchemeRedirect && target.https !== downstreamHttps) return { refusal: 'unsafe_scheme' };
  if (history.count >= policy.maxInternalRedirects) return { refusal: 'too_many_redirects' };
  const route = routeOf(target);
  if (route === null) return { refusal: 'no_route' };
  for (const predicate of policy.predicates) {
    let accepted: boolean;
    if (predicate.name === ALLOW_LISTED_ROUTES) accepted = predicate.allowedRouteNames.includes(route.name);
    else if (predicate.name === PREVIOUS_ROUTES) accepted = history.follow(redirect.route.name, route.name);
    // safe_cross_scheme: from https anywhere, from http to http only.
    else accepted = downstreamHttps || !target.https;
    if (!accepted) return { refusal: 'predicate' };
  }
  history.count++;
  return { target, route };
}
