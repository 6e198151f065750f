// Bootstraps the command line tests serve: every address on loopback port 0, so that the
// proxy can start next to other tests, written in every file format the proxy reads.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as yaml from 'js-yaml';
import * as protojson from 'protobufjs/ext/protojson';
import * as textformat from 'protobufjs/ext/textformat';
import { protoSchema } from '../../src/config/schema';
import type { Json } from './config_fixtures';

const TCP_PROXY_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
const HCM_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';

const loopback = (port = 0): Json => ({ socket_address: { address: '127.0.0.1', port_value: port } });

/** v3: admin, a TCP listener, an HTTP listener, and two ROUND_ROBIN static clusters. */
export function servableV3(accessLogPath: string): Json {
  return {
    node: { id: 'node-1', cluster: 'edge', locality: { zone: 'eu-1a' } },
    admin: { access_log_path: accessLogPath, address: loopback() },
    static_resources: {
      listeners: [
        {
          name: 'tcp_in',
          address: loopback(),
          filter_chains: [
            {
              filters: [
                { name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'tcp_in', cluster: 'secure' } },
              ],
            },
          ],
        },
        {
          name: 'http_in',
          address: loopback(),
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
                      virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'plain' } }] }],
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
          name: 'secure',
          connect_timeout: '0.250s',
          type: 'STATIC',
          load_assignment: { cluster_name: 'secure', endpoints: [{ lb_endpoints: [{ endpoint: { address: loopback(9) } }] }] },
        },
        {
          name: 'plain',
          type: 'STATIC',
          load_assignment: { cluster_name: 'plain', endpoints: [{ lb_endpoints: [{ endpoint: { address: loopback(9) } }] }] },
        },
      ],
    },
  };
}

/**
 * servableV3 as a v2 file says it: `hosts`, `config:` and legacy names. (`tls_context` is
 * upgraded too, see config_v2_upgrade.test.ts, but upstream TLS does not run yet, so a served
 * bootstrap cannot hold one.)
 */
export function servableV2(accessLogPath: string): Json {
  const bootstrap = servableV3(accessLogPath);
  const [tcp, http] = bootstrap.static_resources.listeners;
  const { '@type': _tcpType, ...tcpConfig } = tcp.filter_chains[0].filters[0].typed_config;
  tcp.filter_chains[0].filters[0] = { name: 'envoy.tcp_proxy', config: tcpConfig };
  const hcm = http.filter_chains[0].filters[0];
  hcm.name = 'envoy.http_connection_manager';
  hcm.typed_config.http_filters = [{ name: 'envoy.router', config: {} }];
  const [secure, plain] = bootstrap.static_resources.clusters;
  secure.hosts = [loopback(9)];
  delete secure.load_assignment;
  plain.hosts = [loopback(9)];
  delete plain.load_assignment;
  return bootstrap;
}

/** Writes `bootstrap` as .yaml, .json, .pb and .pb_text in `dir`; returns the paths in that order. */
export function writeEveryFormat(dir: string, bootstrap: Json): string[] {
  const type = protoSchema().bootstrap;
  const message = protojson.fromJson(type, bootstrap);
  const files: Array<[string, string | Uint8Array]> = [
    ['bootstrap.yaml', yaml.dump(bootstrap)],
    ['bootstrap.json', JSON.stringify(bootstrap, null, 2)],
    ['bootstrap.pb', type.encode(message).finish()],
    ['bootstrap.pb_text', textformat.toText(type, message)],
  ];
  return files.map(([name, contents]) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, contents);
    return file;
  });
}
