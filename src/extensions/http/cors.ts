// proxy.filters.http.cors (src/filters/http/cors.ts): its typed_config is empty, as Envoy's; the
// policies it enforces are the route configuration's (`cors` on virtual hosts and route actions).

import type { ExtensionDescriptor } from '../../config/extension';
import { CONFIG_TYPES, CORS } from '../../config/names';
import type { DataPlaneFactories } from '../data_plane_factories';

export const CORS_FILTER: ExtensionDescriptor<'proxy.filters.http', DataPlaneFactories['proxy.filters.http']> = {
  category: 'proxy.filters.http',
  name: CORS,
  aliases: ['envoy.cors'],
  configType: CONFIG_TYPES.cors,
  shape: { fields: {} },
  model: () => ({ name: CORS }),
  factory: (_config, context) => {
    const { CorsFilterFactory } = require('../../filters/http/cors') as typeof import('../../filters/http/cors');
    return new CorsFilterFactory(context.scope, context.runtime, context.random);
  },
};
