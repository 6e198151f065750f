// What RDS accepts in the supervisor: a resource checked as an inline route_config is when the
// bootstrap loads (its clusters against those active now, when validate_clusters asks), then
// built into the route table a worker builds (a domain named twice, a direct_response file that
// cannot be read), which is dropped. A worker is sent only what it can serve.

import type { ValidationContext } from '../config/extension';
import type { JsonObject } from '../config/json';
import type { RouteConfiguration } from '../config/model';
import type { ProtoSchema } from '../config/schema';
import { mathRandom } from '../common/random';
import { loadRouteConfigResource } from '../extensions/network/http_connection_manager/route_config_resource';
import { RouteTable } from '../filters/http/route_table';
import type { RuntimeSource } from '../runtime/live_runtime';
import { NamingStatsStore } from '../stats/naming_store';

export interface RouteConfigLoaderDeps {
  readonly schema: ProtoSchema;
  /** The bootstrap's validation context; its clusters are replaced by those active at each update. */
  readonly context: ValidationContext;
  /** --disable-extensions, resolved. */
  readonly disabledExtensions: ReadonlySet<string>;
  readonly activeClusters: () => ReadonlySet<string>;
  readonly runtime: RuntimeSource;
}

/** @returns the loader of one resource, which throws a FieldError at a path relative to the resource */
export function routeConfigLoader(deps: RouteConfigLoaderDeps): (resource: JsonObject) => RouteConfiguration {
  return (resource) => {
    const config = loadRouteConfigResource(deps.schema, resource, { ...deps.context, clusters: deps.activeClusters() }, deps.disabledExtensions);
    // Only its errors matter: the stats it names go nowhere.
    void new RouteTable(config, deps.runtime, mathRandom, new NamingStatsStore().scope('vhost'));
    return config;
  };
}
