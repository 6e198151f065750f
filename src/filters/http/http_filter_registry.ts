// The HTTP filters the connection manager can run before the router, by configured name: the
// factories of the HTTP filter descriptors (src/extensions/http), handed to the worker's filter
// context. Names and typed_config types are canonicalized and checked by the configuration
// pipeline, which reads the same descriptors.

import type { RandomSource } from '../../common/random';
import type { HttpFilterConfig, RouteConfiguration } from '../../config/model';
import type { RuntimeSource } from '../../runtime/live_runtime';
import type { Scope } from '../../stats/stats';
import type { AsyncClient } from '../../upstream/worker/async_client';
import type { HealthCheckContext } from './health_check';
import type { HttpFilterFactory } from './http_filter';

/** What filters may read from the worker they run in. */
export type HttpFilterContext = HealthCheckContext & {
  /** The factory of each HTTP filter this build has, by name. */
  readonly httpFilters: ReadonlyMap<string, HttpFilterFactoryCreator>;
  /** The worker's requests of its own: a filter's calls to its services. */
  readonly asyncClient: AsyncClient;
};

/** What a filter's factory gets for the connection manager it serves. */
export type HttpFilterFactoryContext = HttpFilterContext & {
  /** The connection manager's `http.<stat_prefix>`. */
  readonly scope: Scope;
  /** The root scope, for a filter whose statistics Envoy roots at a stat_prefix of its own. */
  readonly stats: Scope;
  /** The connection manager's routes: a filter prepares the typed_per_filter_config entries for it once. */
  readonly routeConfig: RouteConfiguration;
  readonly runtime: RuntimeSource;
  readonly random: RandomSource;
  /** The listener's per_connection_buffer_limit_bytes. */
  readonly bufferLimitBytes: number;
};

/** An HTTP filter's factory for its model; null when it needs none (the router, which the connection manager runs itself). */
export type HttpFilterFactoryCreator = (config: HttpFilterConfig, context: HttpFilterFactoryContext) => HttpFilterFactory | null;

/** The factory of a decoder filter; null for a name (or a config) this build does not run. */
export function createHttpFilterFactory(config: HttpFilterConfig, context: HttpFilterFactoryContext): HttpFilterFactory | null {
  return context.httpFilters.get(config.name)?.(config, context) ?? null;
}
