// proxy.internal_redirect_predicates.allow_listed_routes: an internal redirect may lead only to
// the routes named here (the router's internal_redirect.ts acts on it). The protos refuse an
// empty name.

import type { ExtensionDescriptor } from '../../config/extension';
import { stringList } from '../../config/json';
import { leaf } from '../../config/shape';
import { ALLOW_LISTED_ROUTES, CONFIG_TYPES } from '../../config/names';
import type { DataPlaneFactories } from '../data_plane_factories';

export const ALLOW_LISTED_ROUTES_PREDICATE: ExtensionDescriptor<'proxy.internal_redirect_predicates', DataPlaneFactories['proxy.internal_redirect_predicates']> = {
  category: 'proxy.internal_redirect_predicates',
  name: ALLOW_LISTED_ROUTES,
  configType: CONFIG_TYPES.allowListedRoutes,
  shape: { fields: { allowed_route_names: leaf } },
  model: (config) => ({ name: ALLOW_LISTED_ROUTES, allowedRouteNames: stringList(config, 'allowed_route_names') }),
  factory: null,
};
