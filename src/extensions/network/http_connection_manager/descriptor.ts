// proxy.filters.network.http_connection_manager (src/filters/network/http_connection_manager/):
// HTTP over a connection, through its HTTP filters, to the route table's clusters.

import type { ExtensionDescriptor } from '../../../config/extension';
import type { HttpConnectionManagerConfig } from '../../../config/model';
import { CONFIG_TYPES, HTTP_CONNECTION_MANAGER } from '../../../config/names';
import type { DataPlaneFactories } from '../../data_plane_factories';
import { httpConnectionManager } from './model';
import { HTTP_CONNECTION_MANAGER_SHAPE } from './shape';
import { validateHttpConnectionManager } from './validation';

export const HTTP_CONNECTION_MANAGER_FILTER: ExtensionDescriptor<'proxy.filters.network', DataPlaneFactories['proxy.filters.network']> = {
  category: 'proxy.filters.network',
  name: HTTP_CONNECTION_MANAGER,
  aliases: ['envoy.http_connection_manager'],
  configType: CONFIG_TYPES.httpConnectionManager,
  shape: HTTP_CONNECTION_MANAGER_SHAPE,
  validate: validateHttpConnectionManager,
  model: (config, { extensions }) => httpConnectionManager(config, extensions),
  factory: {
    create: (config: HttpConnectionManagerConfig, context) => {
      const { HttpConnectionManagerFactory } = require('../../../filters/network/http_connection_manager/factory') as typeof import('../../../filters/network/http_connection_manager/factory');
      return new HttpConnectionManagerFactory(config, {
        stats: context.stats,
        clusters: context.clusters,
        drain: context.drain,
        overload: context.overload,
        log: context.log('http'),
        routerLog: context.log('router'),
        connectionLog: context.log('connection'),
        ids: context.ids,
        bufferLimitBytes: context.bufferLimitBytes,
        writeBatch: context.writeBatch,
        localAddress: context.localAddress,
        node: context.node,
        runtime: context.runtime,
        filterContext: context.filterContext,
        accessLogs: context.accessLogs(config.accessLogs),
        asyncClient: context.asyncClient,
        // Made only for a connection manager that traces.
        tracer: config.tracing === null ? null : context.tracerFor(config.tracing.provider),
        tracingOperation: context.trafficDirection === 'OUTBOUND' ? 'egress' : 'ingress',
        routeConfigs: context.routeConfigs,
      });
    },
  },
};
