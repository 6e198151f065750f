// proxy.filters.http.grpc_http1_bridge (src/filters/http/grpc_http1_bridge.ts): Envoy 1.16's
// Config is empty; the fields later Envoys added are refused by path.

import type { ExtensionDescriptor } from '../../config/extension';
import { CONFIG_TYPES, GRPC_HTTP1_BRIDGE } from '../../config/names';
import { refused } from '../../config/shape';
import type { DataPlaneFactories } from '../data_plane_factories';

const NOT_IN_1_16 = refused("is not a field of Envoy 1.16's gRPC HTTP/1.1 bridge");

export const GRPC_HTTP1_BRIDGE_FILTER: ExtensionDescriptor<'proxy.filters.http', DataPlaneFactories['proxy.filters.http']> = {
  category: 'proxy.filters.http',
  name: GRPC_HTTP1_BRIDGE,
  aliases: ['envoy.grpc_http1_bridge'],
  configType: CONFIG_TYPES.grpcHttp1Bridge,
  shape: { fields: { upgrade_protobuf_to_grpc: NOT_IN_1_16, ignore_query_parameters: NOT_IN_1_16 } },
  model: () => ({ name: GRPC_HTTP1_BRIDGE }),
  factory: (_config, context) => {
    const { GrpcHttp1BridgeFilterFactory } = require('../../filters/http/grpc_http1_bridge') as typeof import('../../filters/http/grpc_http1_bridge');
    return new GrpcHttp1BridgeFilterFactory(context.clusters);
  },
};
