// The connection managers of a bootstrap that take their routes from RDS, and the key of the
// route configuration each names: one subscription per (config source, route_config_name),
// shared by every connection manager that names the same pair (Envoy's
// RouteConfigProviderManager keys them by a hash of the `rds` message). Pure.

import { childPath, indexPath } from './field_path';
import type { Bootstrap, RdsConfig, RouteConfiguration } from './model';

/** One connection manager's `rds`. */
export interface RdsSource {
  /** What the supervisor subscribes by and the workers swap route tables by (rdsKey). */
  readonly key: string;
  readonly rds: RdsConfig;
  /** The connection manager's stat_prefix: the subscription's stats are `http.<stat_prefix>.rds.<name>.*`. */
  readonly statPrefix: string;
  /** Its field path, `static_resources.listeners[0].filter_chains[0].filters[0].typed_config.rds`. */
  readonly path: string;
}

/** A route configuration RDS brought, by the key of the connection managers that name it. */
export interface KeyedRouteConfig {
  readonly key: string;
  readonly config: RouteConfiguration;
}

/** The same (config source, name) gives the same key, whichever connection manager names it. */
export function rdsKey(rds: RdsConfig): string {
  return JSON.stringify([rds.configSource, rds.routeConfigName]);
}

/** Every connection manager's `rds` in the order of the listeners, the same key as often as it is named. */
export function rdsSourcesOf(bootstrap: Bootstrap): RdsSource[] {
  return bootstrap.listeners.flatMap((listener, l) =>
    listener.filterChains.flatMap((chain, c) =>
      chain.filters.flatMap((filter, f) =>
        filter.kind === 'http_connection_manager' && filter.rds !== null
          ? [
              {
                key: rdsKey(filter.rds),
                rds: filter.rds,
                statPrefix: filter.statPrefix,
                path: `${indexPath(childPath(indexPath(childPath(indexPath('static_resources.listeners', l), 'filter_chains'), c), 'filters'), f)}.typed_config.rds`,
              },
            ]
          : [],
      ),
    ),
  );
}
