// proxy.filters.http.router: the terminal HTTP filter. The connection manager runs the router
// itself (src/filters/http/router.ts) from the route table; Router's own fields are refused.

import type { ExtensionDescriptor } from '../../config/extension';
import { CONFIG_TYPES, ROUTER } from '../../config/names';
import type { DataPlaneFactories } from '../data_plane_factories';

export const ROUTER_FILTER: ExtensionDescriptor<'proxy.filters.http', DataPlaneFactories['proxy.filters.http']> = {
  category: 'proxy.filters.http',
  name: ROUTER,
  aliases: ['envoy.router'],
  configType: CONFIG_TYPES.router,
  shape: { fields: {} },
  model: () => ({ name: ROUTER }),
  factory: () => null,
};
