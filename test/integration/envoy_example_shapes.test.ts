// Configurations written the way Envoy's own examples write them load, validate and serve:
// a front proxy whose TLS listener gives `tls_certificates:` as a single object (not a list),
// with lower-case enums, inline PEM and a router without typed_config; and a v2 route's
// `host_rewrite`, which reaches the upstream as its Host.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makeCa, makeLeaf } from '../helpers/certificates';
import { runToExit, type Serving, startServing, stopServing } from '../helpers/cli_runs';
import { localCluster } from '../helpers/config_fixtures';
import { closeServer, request, startUpstream, type Upstream } from '../helpers/http_peers';
import { listenerPort, makeTempDir, type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };

/** `text` as a YAML literal block indented by `indent` spaces. */
function block(text: string, indent: number): string {
  return `|\n${text.trimEnd().split('\n').map((line) => ' '.repeat(indent) + line).join('\n')}`;
}

/** Shaped like Envoy 1.16's examples/front-proxy/front-envoy.yaml, with our names and ports. */
function frontProxyYaml(cert: string, key: string, service1: number, service2: number): string {
  const cluster = (name: string, port: number) => `
  - name: ${name}
    connect_timeout: 0.25s
    type: strict_dns
    lb_policy: round_robin
    load_assignment:
      cluster_name: ${name}
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: 127.0.0.1
                port_value: ${port}`;
  const httpFilter = `
      - name: proxy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          codec_type: auto
          stat_prefix: ingress_http
          route_config:
            name: local_route
            virtual_hosts:
            - name: backend
              domains:
              - "*"
              routes:
              - match:
                  prefix: "/service/1"
                route:
                  cluster: service1
              - match:
                  prefix: "/service/2"
                route:
                  cluster: service2
          http_filters:
          - name: proxy.filters.http.router`;
  const listener = (name: string, chainRest = '') => `
  - name: ${name}
    address:
      socket_address:
        address: 127.0.0.1
        port_value: 0
    filter_chains:
    - filters:${httpFilter}${chainRest}`;
  const tlsSocket = `
      transport_socket:
        name: proxy.transport_sockets.tls
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext
          common_tls_context:
            tls_certificates:
              certificate_chain:
                inline_string: ${block(cert, 18)}
              private_key:
                inline_string: ${block(key, 18)}`;
  return `static_resources:
  listeners:${listener('plain')}${listener('tls', tlsSocket)}
  clusters:${cluster('service1', service1)}${cluster('service2', service2)}
admin:
  access_log_path: "/dev/null"
  address:
    socket_address:
      address: 127.0.0.1
      port_value: 0
`;
}

function httpsGet(port: number, urlPath: string, ca: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: urlPath, servername: 'front.example', ca, agent: false, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

describe('a front proxy written like Envoy\'s example', TIMEOUT, () => {
  let dir: string;
  let configPath: string;
  let caPem: Buffer;
  let service1: Upstream;
  let service2: Upstream;

  before(async () => {
    dir = makeTempDir();
    const ca = makeCa(dir, 'ca', 30);
    const leaf = makeLeaf(dir, ca, 'front', 'DNS:front.example', 30);
    caPem = fs.readFileSync(ca.cert);
    service1 = await startUpstream('service1', (_req, res) => res.end('service 1'));
    service2 = await startUpstream('service2', (_req, res) => res.end('service 2'));
    configPath = path.join(dir, 'front-proxy.yaml');
    fs.writeFileSync(configPath, frontProxyYaml(fs.readFileSync(leaf.cert, 'utf8'), fs.readFileSync(leaf.key, 'utf8'), service1.port, service2.port));
  });

  after(async () => {
    await service1?.close();
    await service2?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('--mode validate accepts it', async () => {
    const result = await runToExit(['-c', configPath, '--mode', 'validate']);
    assert.equal(result.code, 0, result.stderr);
  });

  test('it serves both listeners, TLS with the single certificate', async () => {
    let proxy: Serving | undefined;
    try {
      proxy = await startServing(['-c', configPath, '--disable-hot-restart', '--concurrency', '1']);
      const tlsPort = await listenerPort(proxy.adminUrl, 'tls');
      const plainPort = await listenerPort(proxy.adminUrl, 'plain');
      assert.deepEqual(await httpsGet(tlsPort, '/service/1', caPem), { status: 200, body: 'service 1' });
      assert.deepEqual(await httpsGet(tlsPort, '/service/2', caPem), { status: 200, body: 'service 2' });
      const plain = await request(plainPort, { path: '/service/2' });
      assert.deepEqual([plain.status, plain.body], [200, 'service 2']);
    } finally {
      if (proxy !== undefined) await stopServing(proxy);
    }
  });
});

describe('a v2 route\'s host_rewrite', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;

  before(async () => {
    upstream = await startUpstream('web');
    const routes = [
      { match: { prefix: '/rewritten' }, route: { cluster: 'web', host_rewrite: 'internal.example' } },
      { match: { prefix: '/' }, route: { cluster: 'web' } },
    ];
    proxy = await startProxy({
      static_resources: {
        listeners: [
          {
            name: 'http_in',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            filter_chains: [
              {
                filters: [
                  {
                    name: 'envoy.http_connection_manager',
                    config: {
                      stat_prefix: 'ingress_http',
                      route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes }] },
                      http_filters: [{ name: 'envoy.router' }],
                    },
                  },
                ],
              },
            ],
          },
        ],
        clusters: [localCluster('web', upstream.port)],
      },
    });
  });

  after(async () => {
    await proxy?.cleanup();
    if (upstream !== undefined) await closeServer(upstream.server);
  });

  test('is the upstream request\'s Host; other routes keep the client\'s', async () => {
    const port = await proxy.listenerPort('http_in');
    const rewritten = await request(port, { path: '/rewritten', headers: { host: 'front.example' } });
    assert.equal(rewritten.status, 200);
    const kept = await request(port, { path: '/kept', headers: { host: 'front.example' } });
    assert.equal(kept.status, 200);
    assert.deepEqual(
      upstream.seen.map((seen) => [seen.url, seen.headers.host]),
      [
        ['/rewritten', 'internal.example'],
        ['/kept', 'front.example'],
      ],
    );
  });
});
