// proxy.internal_redirect_predicates.previous_routes: a route may send one downstream request to
// a given route by internal redirect once (the router's internal_redirect.ts acts on it).
// PreviousRoutesConfig has no fields.

import type { ExtensionDescriptor } from '../../config/extension';
import { CONFIG_TYPES, PREVIOUS_ROUTES } from '../../config/names';
import type { DataPlaneFactories } from '../data_plane_factories';

export const PREVIOUS_ROUTES_PREDICATE: ExtensionDescriptor<'proxy.internal_redirect_predicates', DataPlaneFactories['proxy.internal_redirect_predicates']> = {
  category: 'proxy.internal_redirect_predicates',
  name: PREVIOUS_ROUTES,
  configType: CONFIG_TYPES.previousRoutes,
  shape: { fields: {} },
  model: () => ({ name: PREVIOUS_ROUTES }),
  factory: null,
};
