// One RouteConfiguration resource of an RDS update through the stages an inline route_config
// goes through when the bootstrap loads (load.ts): --disable-extensions, the protos' rules,
// validation, the capability check, the model. A resource is refused or accepted alike from
// either place, with the same reasons at the same paths, relative to the resource.

import { FieldErrorCollector } from '../../../config/errors';
import type { ValidationContext } from '../../../config/extension';
import type { JsonObject } from '../../../config/json';
import type { RouteConfiguration } from '../../../config/model';
import type { ProtoSchema } from '../../../config/schema';
import { checkShape } from '../../../config/shape';
import { checkRouteConfigDisabledExtensions } from '../../../config/validation/disabled_extensions';
import { checkMessageProtoRules } from '../../../config/validation/proto_rules';
import { ROUTE_CONFIGURATION_RESOURCE } from '../../../config/xds/resource_types';
import { routeConfiguration } from './model';
import { ROUTE_CONFIG } from './shape';
import { validateRouteConfiguration } from './validation';

/**
 * @param resource decoded v3 JSON (the resource decoder's output)
 * @param context `clusters`: the clusters active now, which validate_clusters (false by default
 *   for RDS, as in Envoy) checks the routes against
 * @param disabledExtensions --disable-extensions, resolved: a per-route config of a disabled filter is refused
 * @throws FieldError (FieldErrors for several unsupported fields) at a path relative to the resource
 */
export function loadRouteConfigResource(
  schema: ProtoSchema,
  resource: JsonObject,
  context: ValidationContext,
  disabledExtensions: ReadonlySet<string>,
): RouteConfiguration {
  const { extensions } = context;
  checkRouteConfigDisabledExtensions(resource, '', disabledExtensions, extensions);
  // The order of load.ts: the protos' rules, then the validators that rely on them, then what this build runs.
  checkMessageProtoRules(schema, ROUTE_CONFIGURATION_RESOURCE.v3TypeName, resource, '');
  validateRouteConfiguration(resource, '', context, false);
  const errors = new FieldErrorCollector();
  checkShape(resource, ROUTE_CONFIG, '', errors, (url) => extensions.shapeOfType(url));
  errors.throwIfAny();
  return routeConfiguration(resource, extensions);
}
