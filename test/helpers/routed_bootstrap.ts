// A bootstrap for admin tests that need traffic: one HTTP listener `http_in` on loopback port 0
// routing everything to cluster `backend` at 127.0.0.1:<upstreamPort>.

import type { Json } from './config_fixtures';

const HCM_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';

export function routedBootstrap(upstreamPort: number, admin?: Json): Json {
  const loopback = (port: number): Json => ({ socket_address: { address: '127.0.0.1', port_value: port } });
  return {
    ...(admin === undefined ? {} : { admin }),
    static_resources: {
      listeners: [
        {
          name: 'http_in',
          address: loopback(0),
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.filters.network.http_connection_manager',
                  typed_config: {
                    '@type': HCM_TYPE,
                    stat_prefix: 'ingress_http',
                    route_config: {
                      name: 'local_route',
                      virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'backend' } }] }],
                    },
                    http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }],
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: [
        {
          name: 'backend',
          type: 'STATIC',
          load_assignment: { cluster_name: 'backend', endpoints: [{ lb_endpoints: [{ endpoint: { address: loopback(upstreamPort) } }] }] },
        },
      ],
    },
  };
}
