// Which typed_per_filter_config entry a filter reads for a request, as Envoy 1.16's
// resolveMostSpecificPerFilterConfig finds it: the weighted cluster's, else the route's, else
// the virtual host's. A route that is no route to a cluster (a redirect, a direct response) has
// no route entry in Envoy, so its virtual host's does not count for it. Pure.

import type { PerFilterConfigs, PerRouteModels, RouteConfiguration } from '../../config/model';
import type { RouteEntry } from './http_filter';

/** The most specific entry for filter `name` on the request's route; undefined when none has one (or no route matched). */
export function mostSpecificPerFilterConfig<N extends keyof PerRouteModels>(entry: RouteEntry | null, name: N): PerRouteModels[N] | undefined {
  if (entry === null) return undefined;
  const { route, weightedCluster } = entry;
  const own = weightedCluster?.perFilterConfig?.[name] ?? route.perFilterConfig?.[name];
  if (own !== undefined || route.action.kind !== 'route') return own;
  return entry.virtualHost.perFilterConfig?.[name];
}

/** Every entry for filter `name` in a route configuration, for a filter that prepares each once. */
export function perFilterConfigsOf<N extends keyof PerRouteModels>(routeConfig: RouteConfiguration, name: N): PerRouteModels[N][] {
  const levels: (PerFilterConfigs | undefined)[] = routeConfig.virtualHosts.flatMap((virtualHost) => [
    virtualHost.perFilterConfig,
    ...virtualHost.routes.flatMap((route) => [
      route.perFilterConfig,
      ...(route.action.kind === 'route' ? (route.action.weightedClusters?.clusters ?? []).map((cluster) => cluster.perFilterConfig) : []),
    ]),
  ]);
  return levels.flatMap((level) => {
    const config = level?.[name];
    return config === undefined ? [] : [config];
  });
}

/**
 * The entries for filter `name` on the request's route from the least specific (the virtual
 * host's) to the most (the weighted cluster's), for a filter that merges them (Envoy 1.16's
 * getMergedPerFilterConfig); empty when no route to a cluster matched.
 */
export function perFilterConfigChain<N extends keyof PerRouteModels>(entry: RouteEntry | null, name: N): PerRouteModels[N][] {
  if (entry === null || entry.route.action.kind !== 'route') return [];
  const levels = [entry.virtualHost.perFilterConfig?.[name], entry.route.perFilterConfig?.[name], entry.weightedCluster?.perFilterConfig?.[name]];
  return levels.filter((config): config is PerRouteModels[N] => config !== undefined);
}
