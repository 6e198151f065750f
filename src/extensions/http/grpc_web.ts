// proxy.filters.http.grpc_web (src/filters/http/grpc_web.ts): its typed_config is empty, as
// Envoy's GrpcWeb.

import type { ExtensionDescriptor } from '../../config/extension';
import { CONFIG_TYPES, GRPC_WEB } from '../../config/names';
import type { DataPlaneFactories } from '../data_plane_factories';

export const GRPC_WEB_FILTER: ExtensionDescriptor<'proxy.filters.http', DataPlaneFactories['proxy.filters.http']> = {
  category: 'proxy.filters.http',
  name: GRPC_WEB,
  aliases: ['envoy.grpc_web'],
  configType: CONFIG_TYPES.grpcWeb,
  shape: { fields: {} },
  model: () => ({ name: GRPC_WEB }),
  factory: (_config, context) => {
    const { GrpcWebFilterFactory } = require('../../filters/http/grpc_web') as typeof import('../../filters/http/grpc_web');
    return new GrpcWebFilterFactory(context.clusters);
  },
};
