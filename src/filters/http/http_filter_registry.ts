// The HTTP filters the connection manager can run before the router, by configured name (the
// names and typed_config types are canonicalized and checked by the configuration pipeline:
// src/config/validation/http_connection_manager.ts).

import type { HttpFilterConfig } from '../../config/model';
import { HEALTH_CHECK } from '../../config/names';
import { type HealthCheckContext, HealthCheckFilterFactory } from './health_check';
import type { HttpFilterFactory } from './http_filter';

/** What filters may read from the worker they run in. */
export type HttpFilterContext = HealthCheckContext;

/** An HTTP filter's factory for its model; null when it needs none (the router, which the connection manager runs itself). */
export type HttpFilterFactoryCreator = (config: HttpFilterConfig, context: HttpFilterContext) => HttpFilterFactory | null;

const FACTORIES: ReadonlyMap<string, HttpFilterFactoryCreator> = new Map([
  [HEALTH_CHECK, (config, context) => (config.healthCheck === undefined ? null : new HealthCheckFilterFactory(config.healthCheck, context))],
]);

/** The factory of a decoder filter; null for a name (or a config) this build does not run. */
export function createHttpFilterFactory(config: HttpFilterConfig, context: HttpFilterContext): HttpFilterFactory | null {
  return FACTORIES.get(config.name)?.(config, context) ?? null;
}
