// Bootstrap fixtures for the configuration tests: one valid v3 bootstrap, the same bootstrap
// written the v2 way, and temporary directories for config files.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Plain JSON, typed loosely so that tests can reach into fixtures and change them. */
export type Json = any;

const TCP_PROXY_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
const HCM_TYPE =
  'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';
const UPSTREAM_TLS_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';
const DOWNSTREAM_TLS_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';

function socketAddress(address: string, port: number): Json {
  return { socket_address: { address, port_value: port } };
}

/** A valid v3 bootstrap: admin, a TCP listener, an HTTP listener and two static clusters. */
export function v3Bootstrap(): Json {
  return {
    node: { id: 'node-1', cluster: 'edge', locality: { region: 'eu', zone: 'eu-1a', sub_zone: 'rack-7' } },
    admin: { access_log_path: '/dev/null', address: socketAddress('127.0.0.1', 9901) },
    static_resources: {
      listeners: [
        {
          name: 'tcp_in',
          address: socketAddress('0.0.0.0', 10000),
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.filters.network.tcp_proxy',
                  typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'tcp_in', cluster: 'backend', idle_timeout: '30s' },
                },
              ],
            },
          ],
        },
        {
          name: 'http_in',
          address: socketAddress('0.0.0.0', 10001),
          per_connection_buffer_limit_bytes: 32768,
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.filters.network.http_connection_manager',
                  typed_config: {
                    '@type': HCM_TYPE,
                    stat_prefix: 'ingress_http',
                    use_remote_address: true,
                    route_config: {
                      name: 'local_route',
                      virtual_hosts: [
                        {
                          name: 'web',
                          domains: ['Example.com', '*'],
                          routes: [
                            { match: { path: '/healthz' }, direct_response: { status: 200, body: { inline_string: 'ok' } } },
                            {
                              match: { prefix: '/' },
                              route: { cluster: 'web:v1', timeout: '2.500s', host_rewrite_literal: 'internal' },
                            },
                          ],
                        },
                      ],
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
          connect_timeout: '0.250s',
          type: 'STATIC',
          lb_policy: 'RANDOM',
          ignore_health_on_host_removal: true,
          load_assignment: {
            cluster_name: 'backend',
            endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress('127.0.0.1', 8080) } }] }],
          },
          transport_socket: {
            name: 'envoy.transport_sockets.tls',
            typed_config: { '@type': UPSTREAM_TLS_TYPE, sni: 'backend.internal' },
          },
        },
        {
          name: 'web:v1',
          alt_stat_name: 'web:stats',
          type: 'STATIC',
          lb_policy: 'LEAST_REQUEST',
          max_requests_per_connection: 100,
          load_assignment: {
            cluster_name: 'web:v1',
            endpoints: [
              {
                locality: { zone: 'eu-1b' },
                priority: 1,
                load_balancing_weight: 10,
                lb_endpoints: [
                  {
                    endpoint: { address: socketAddress('10.0.0.1', 80), hostname: 'web-1' },
                    load_balancing_weight: 3,
                    health_status: 'HEALTHY',
                    metadata: { filter_metadata: { 'proxy.lb': { version: 'v1' } } },
                  },
                  { endpoint: { address: socketAddress('10.0.0.2', 80) } },
                ],
              },
            ],
          },
        },
      ],
    },
  };
}

/** v3Bootstrap() as a v2 file would say it: hosts, tls_context, `config:`, v2 names and types. */
export function v2Bootstrap(): Json {
  const bootstrap = v3Bootstrap();
  const [tcpListener, httpListener] = bootstrap.static_resources.listeners;
  const tcpFilter = tcpListener.filter_chains[0].filters[0];
  const { '@type': _tcpType, ...tcpConfig } = tcpFilter.typed_config;
  tcpListener.filter_chains[0].filters[0] = { name: 'envoy.tcp_proxy', config: tcpConfig };

  const hcm = httpListener.filter_chains[0].filters[0];
  hcm.name = 'envoy.http_connection_manager';
  hcm.typed_config['@type'] =
    'type.googleapis.com/envoy.config.filter.network.http_connection_manager.v2.HttpConnectionManager';
  hcm.typed_config.http_filters = [{ name: 'envoy.router', config: {} }];
  const action = hcm.typed_config.route_config.virtual_hosts[0].routes[1].route;
  action.host_rewrite = action.host_rewrite_literal;
  delete action.host_rewrite_literal;

  const [backend] = bootstrap.static_resources.clusters;
  backend.drain_connections_on_host_removal = backend.ignore_health_on_host_removal;
  delete backend.ignore_health_on_host_removal;
  backend.hosts = [socketAddress('127.0.0.1', 8080)];
  delete backend.load_assignment;
  backend.tls_context = { sni: 'backend.internal' };
  delete backend.transport_socket;
  return bootstrap;
}

/** Runs `body` with a fresh temporary directory, removed afterwards whatever happens. */
export function withTempDir<T>(body: (dir: string) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-config-test-'));
  try {
    return body(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A STATIC cluster `name` of one host, 127.0.0.1:`port`. */
export function localCluster(name: string, port: number): Json {
  return {
    name,
    connect_timeout: '1s',
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress('127.0.0.1', port) } }] }] },
  };
}

/**
 * Listener `name` on 127.0.0.1:`port`: an HTTP connection manager (stat prefix ingress_http,
 * router filter) over one virtual host of `routes`, with `options` merged into its config.
 */
export function httpListener(name: string, port: number, routes: Json[], options: Json = {}): Json {
  return {
    name,
    address: socketAddress('127.0.0.1', port),
    filter_chains: [
      {
        filters: [
          {
            name: 'proxy.filters.network.http_connection_manager',
            typed_config: {
              '@type': HCM_TYPE,
              stat_prefix: 'ingress_http',
              route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes }] },
              http_filters: [{ name: 'proxy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }],
              ...options,
            },
          },
        ],
      },
    ],
  };
}

/** `listener` with its first filter chain terminating TLS with `cert` (files), offering ALPN `alpn`. */
export function withDownstreamTls(listener: Json, cert: { readonly cert: string; readonly key: string }, alpn: readonly string[]): Json {
  listener.filter_chains[0].transport_socket = {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': DOWNSTREAM_TLS_TYPE,
      common_tls_context: {
        tls_certificates: [{ certificate_chain: { filename: cert.cert }, private_key: { filename: cert.key } }],
        alpn_protocols: [...alpn],
      },
    },
  };
  return listener;
}

/** A tcp_proxy listener on 127.0.0.1:`port` to `cluster`. */
export function tcpProxyListener(name: string, port: number, cluster: string): Json {
  return {
    name,
    address: socketAddress('127.0.0.1', port),
    filter_chains: [{ filters: [{ name: 'proxy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'tcp', cluster } }] }],
  };
}

/**
 * Listener `name` on 127.0.0.1:`port` that routes every request to `cluster`, which need not
 * exist at load (validate_clusters off): a cluster that CDS brings.
 */
export function routeAllListener(name: string, port: number, cluster: string): Json {
  return httpListener(name, port, [], {
    route_config: { validate_clusters: false, virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster } }] }] },
  });
}

/**
 * A small bootstrap that serves: admin on 127.0.0.1:0 and listener `http_in` on 127.0.0.1,
 * where GET /version answers `version` (which configuration serves) and every other path goes
 * to cluster `web` at 127.0.0.1:`upstreamPort`.
 */
export function servingBootstrap(opts: { upstreamPort: number; listenPort: number; version: string }): Json {
  const routes = [
    { match: { path: '/version' }, direct_response: { status: 200, body: { inline_string: opts.version } } },
    { match: { prefix: '/' }, route: { cluster: 'web' } },
  ];
  return {
    admin: { access_log_path: '/dev/null', address: socketAddress('127.0.0.1', 0) },
    static_resources: {
      listeners: [httpListener('http_in', opts.listenPort, routes)],
      clusters: [localCluster('web', opts.upstreamPort)],
    },
  };
}
