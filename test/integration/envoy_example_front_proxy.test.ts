// Envoy 1.16's examples/front-proxy, as its README runs it: a front proxy (front-envoy.yaml) in
// front of two services, each a small app behind a service proxy of its own (service-envoy.yaml).
// The containers become loopback addresses: service1's replicas are 127.0.0.2, .3 and .4 on one
// port, service2 is 127.0.0.5, and the names `service1` and `service2` are answered by a DNS
// server the test runs (the front's clusters gain `dns_resolvers` to ask it; nothing else
// changes but addresses and ports). The README's steps: curl both services over HTTP and HTTPS
// (-k), scale service1 to three and see the front round-robin over them, read /server_info and
// /stats on the admin.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as yaml from 'js-yaml';
import { makeCa } from '../helpers/certificates';
import { runToExit } from '../helpers/cli_runs';
import { DnsTestServer } from '../helpers/dns_test_server';
import { closeServer, request } from '../helpers/http_peers';
import { listenerPorts, makeTempDir, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

/** front-envoy.yaml as Envoy 1.16 shipped it (comments dropped); CERT, KEY, DNS_PORT and SERVICEn_PORT stand for what the test makes. */
const FRONT_ENVOY = `
static_resources:
  listeners:
  - address:
      socket_address:
        address: 127.0.0.1
        port_value: 0
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
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
          - name: envoy.filters.http.router
            typed_config: {}
  - address:
      socket_address:
        address: 127.0.0.1
        port_value: 0
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
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
          - name: envoy.filters.http.router
            typed_config: {}

      transport_socket:
        name: envoy.transport_sockets.tls
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext
          common_tls_context:
            tls_certificates:
              certificate_chain:
                inline_string: CERT
              private_key:
                inline_string: KEY
  clusters:
  - name: service1
    connect_timeout: 0.25s
    type: strict_dns
    lb_policy: round_robin
    http2_protocol_options: {}
    dns_resolvers: [{ socket_address: { address: 127.0.0.1, port_value: DNS_PORT } }]
    load_assignment:
      cluster_name: service1
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: service1
                port_value: SERVICE1_PORT
  - name: service2
    connect_timeout: 0.25s
    type: strict_dns
    lb_policy: round_robin
    http2_protocol_options: {}
    dns_resolvers: [{ socket_address: { address: 127.0.0.1, port_value: DNS_PORT } }]
    load_assignment:
      cluster_name: service2
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: service2
                port_value: SERVICE2_PORT
admin:
  access_log_path: "/dev/null"
  address:
    socket_address:
      address: 127.0.0.1
      port_value: 0
`;

/** service-envoy.yaml as Envoy 1.16 shipped it; ADDRESS, PORT and APP_PORT stand for the container's address and ports. */
const SERVICE_ENVOY = `
static_resources:
  listeners:
  - address:
      socket_address:
        address: ADDRESS
        port_value: PORT
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          codec_type: auto
          stat_prefix: ingress_http
          route_config:
            name: local_route
            virtual_hosts:
            - name: service
              domains:
              - "*"
              routes:
              - match:
                  prefix: "/service"
                route:
                  cluster: local_service
          http_filters:
          - name: envoy.filters.http.router
            typed_config: {}
  clusters:
  - name: local_service
    connect_timeout: 0.25s
    type: strict_dns
    lb_policy: round_robin
    load_assignment:
      cluster_name: local_service
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: ADDRESS
                port_value: APP_PORT
admin:
  access_log_path: "/dev/null"
  address:
    socket_address:
      address: 127.0.0.1
      port_value: 0
`;

const BOOT_TIMEOUT_MS = 30_000;

/** `text` as a YAML block scalar's lines, indented to sit under `inline_string:` in the example. */
function pemBlock(text: string): string {
  return `|\n${text.trimEnd().split('\n').map((line) => `                  ${line}`).join('\n')}`;
}

/** One container of the example: service.py (the Flask app) behind its service proxy. */
interface Service {
  readonly hostname: string;
  readonly address: string;
  readonly app: http.Server;
  readonly proxy: RunningProxy;
  /** The service proxy's listener port (8000 in the example). */
  readonly port: number;
}

/** service.py: `/service/<n>` answers who answered. */
function startApp(serviceName: string, hostname: string, address: string): Promise<http.Server> {
  const app = http.createServer((req, res) => {
    if (!/^\/service\/[^/]+$/.test(req.url ?? '')) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`Hello from behind Envoy (service ${serviceName})! hostname: ${hostname} resolvedhostname: ${address}\n`);
  });
  return new Promise((resolve, reject) => {
    app.once('error', reject);
    app.listen(0, address, () => resolve(app));
  });
}

/** A container: its app, then its service proxy on `address:port` (0: any port). */
async function startService(serviceName: string, hostname: string, address: string, port: number): Promise<Service> {
  const app = await startApp(serviceName, hostname, address);
  try {
    const config = SERVICE_ENVOY.replaceAll('ADDRESS', address)
      .replace('APP_PORT', String((app.address() as net.AddressInfo).port))
      .replace('PORT', String(port));
    const proxy = await startProxy(yaml.load(config) as Record<string, unknown>, [], BOOT_TIMEOUT_MS);
    const [listening] = (await listenerPorts(proxy)) as [number];
    return { hostname, address, app, proxy, port: listening };
  } catch (error) {
    await closeServer(app);
    throw error;
  }
}

async function stopService(service: Service): Promise<void> {
  await service.proxy.cleanup();
  await closeServer(service.app);
}

/** `curl -k https://localhost:8443<path>`: the example's certificate is self-signed. */
function curlInsecure(port: number, urlPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: urlPath, rejectUnauthorized: false, agent: false, timeout: 5000 }, (res) => {
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

const hello = (service: number, hostname: string, address: string) => `Hello from behind Envoy (service ${service})! hostname: ${hostname} resolvedhostname: ${address}\n`;

describe("Envoy 1.16's front-proxy example", { timeout: 120_000 }, () => {
  let dir: string;
  let dns: DnsTestServer;
  const services: Service[] = [];
  let front: RunningProxy;
  let frontConfig: string;
  let httpPort: number;
  let httpsPort: number;
  /** Requests answered 200 through the front, per service: the admin's counters must agree. */
  const answered = { service1: 0, service2: 0 };

  const curl = async (urlPath: string) => {
    const reply = await request(httpPort, { path: urlPath });
    if (reply.status === 200) answered[urlPath === '/service/2' ? 'service2' : 'service1']++;
    return reply;
  };

  before(async () => {
    dir = makeTempDir();
    dns = await DnsTestServer.start();
    // docker-compose up: one replica of each service.
    services.push(await startService('1', 'service1-1', '127.0.0.2', 0));
    services.push(await startService('2', 'service2-1', '127.0.0.5', 0));
    dns.zone.set('service1', { a: [{ address: '127.0.0.2', ttl: 5 }] });
    dns.zone.set('service2', { a: [{ address: '127.0.0.5', ttl: 5 }] });
    const selfSigned = makeCa(dir, 'front-envoy', 30);
    frontConfig = path.join(dir, 'front-envoy.yaml');
    fs.writeFileSync(
      frontConfig,
      FRONT_ENVOY.replace('CERT', pemBlock(fs.readFileSync(selfSigned.cert, 'utf8')))
        .replace('KEY', pemBlock(fs.readFileSync(selfSigned.key, 'utf8')))
        .replaceAll('DNS_PORT', String(dns.port))
        .replace('SERVICE1_PORT', String(services[0]!.port))
        .replace('SERVICE2_PORT', String(services[1]!.port)),
    );
    front = await startProxy(yaml.load(fs.readFileSync(frontConfig, 'utf8')) as Record<string, unknown>, [], BOOT_TIMEOUT_MS);
    [httpPort, httpsPort] = (await listenerPorts(front)) as [number, number];
  });

  after(async () => {
    await front?.cleanup();
    await Promise.all(services.map(stopService));
    await dns?.close();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('--mode validate accepts front-envoy.yaml', async () => {
    const result = await runToExit(['-c', frontConfig, '--mode', 'validate']);
    assert.equal(result.code, 0, result.stderr);
  });

  test("Envoy's routing: /service/1 and /service/2 through the front, over HTTP and HTTPS", async () => {
    const one = await curl('/service/1');
    assert.equal(one.status, 200);
    assert.equal(one.body, hello(1, 'service1-1', '127.0.0.2'));
    assert.equal(one.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(one.headers.server, 'proxy');
    assert.match(String(one.headers['x-proxy-upstream-service-time']), /^\d+$/);
    const two = await curl('/service/2');
    assert.deepEqual([two.status, two.body], [200, hello(2, 'service2-1', '127.0.0.5')]);
    for (const [urlPath, service] of [['/service/1', 'service1'], ['/service/2', 'service2']] as const) {
      const secure = await curlInsecure(httpsPort, urlPath);
      assert.equal(secure.status, 200);
      assert.match(secure.body, /^Hello from behind Envoy/);
      answered[service]++;
    }
    // No route for anything else.
    assert.equal((await request(httpPort, { path: '/service/3' })).status, 404);
  });

  test("Envoy's load balancing: service1 scaled to three is served round robin", async () => {
    // docker-compose scale service1=3: two more containers on service1's port, and in its DNS name.
    services.push(await startService('1', 'service1-2', '127.0.0.3', services[0]!.port));
    services.push(await startService('1', 'service1-3', '127.0.0.4', services[0]!.port));
    dns.zone.set('service1', { a: ['127.0.0.2', '127.0.0.3', '127.0.0.4'].map((address) => ({ address, ttl: 5 })) });
    // The front re-resolves every dns_refresh_rate (5 s by default).
    await waitFor('service1 to have three hosts', async () => ((await front.stat('cluster.service1.membership_total')) === 3 ? true : undefined), 15_000);
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) {
      const reply = await curl('/service/1');
      assert.equal(reply.status, 200);
      seen.push(/hostname: (\S+)/.exec(reply.body)![1]!);
    }
    // One worker: each three requests in a row meet each replica once, in the same order.
    assert.deepEqual(new Set(seen.slice(0, 3)), new Set(['service1-1', 'service1-2', 'service1-3']));
    assert.deepEqual(seen.slice(3), seen.slice(0, 3));
  });

  test("the admin: /server_info and the clusters' statistics in /stats", async () => {
    // This build's /server_info is one line: name, revision/build, state, uptimes, epoch.
    const info = (await front.admin('/server_info')).body.trim().split(' ');
    assert.deepEqual([info[0], info[2], info[5]], ['proxy', 'live', '0']);
    const stats = new Map(
      (await front.admin('/stats')).body
        .split('\n')
        .filter((line) => line.includes(': '))
        .map((line) => line.split(': ') as [string, string]),
    );
    const stat = (name: string) => stats.get(name);
    assert.equal(stat('cluster.service1.membership_total'), '3');
    assert.equal(stat('cluster.service1.membership_healthy'), '3');
    // The first resolution, then the scale.
    assert.equal(stat('cluster.service1.membership_change'), '2');
    // h2c to each service proxy, one connection per replica.
    assert.equal(stat('cluster.service1.upstream_cx_http2_total'), '3');
    assert.equal(stat('cluster.service1.upstream_cx_total'), '3');
    assert.equal(stat('cluster.service1.upstream_rq_total'), String(answered.service1));
    assert.equal(stat('cluster.service1.upstream_rq_200'), String(answered.service1));
    assert.equal(stat('cluster.service1.external.upstream_rq_200'), String(answered.service1));
    assert.equal(stat('cluster.service2.external.upstream_rq_200'), String(answered.service2));
    assert.equal(stat('cluster.service2.membership_total'), '1');
    // Each replica's own proxy saw its share.
    const shares = await Promise.all(services.filter((s) => s.hostname.startsWith('service1')).map((s) => s.proxy.stat('cluster.local_service.upstream_rq_200')));
    assert.equal(shares.reduce((sum, n) => sum! + (n ?? 0), 0), answered.service1);
  });
});
