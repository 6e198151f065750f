// Envoy 1.16's examples/zipkin-tracing, as its README runs it: the front proxy, service1's and
// service2's proxies (their own three files: v3 and v2 types, per-connection-manager Zipkin
// providers, HTTP/2 between them; addresses pointed at 127.0.0.1), service1's app calling service2
// through its egress listener with the trace headers, as the example's service.py does, and a
// Zipkin collector. `curl localhost:8000/trace/1` answers with the trace id, and the collector
// receives one trace of four spans: the front's and service1's egress (client), service1's and
// service2's ingress (server), named by the routes' decorators.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as yaml from 'js-yaml';
import { request } from '../helpers/http_peers';
import { listenerPorts, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const FRONT = `
static_resources:
  listeners:
  - address:
      socket_address:
        address: 127.0.0.1
        port_value: 0
    traffic_direction: OUTBOUND
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          generate_request_id: true
          tracing:
            provider:
              name: envoy.tracers.zipkin
              typed_config:
                "@type": type.googleapis.com/envoy.config.trace.v3.ZipkinConfig
                collector_cluster: zipkin
                collector_endpoint: "/api/v2/spans"
                collector_endpoint_version: HTTP_JSON
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
                  prefix: "/"
                route:
                  cluster: service1
                decorator:
                  operation: checkAvailability
              response_headers_to_add:
              - header:
                  key: "x-b3-traceid"
                  value: "%REQ(x-b3-traceid)%"
              - header:
                  key: "x-request-id"
                  value: "%REQ(x-request-id)%"
          http_filters:
          - name: envoy.filters.http.router
            typed_config: {}
  clusters:
  - name: service1
    connect_timeout: 0.250s
    type: strict_dns
    lb_policy: round_robin
    http2_protocol_options: {}
    load_assignment:
      cluster_name: service1
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: 127.0.0.1
                port_value: SERVICE1_PROXY
  - name: zipkin
    connect_timeout: 1s
    type: strict_dns
    lb_policy: round_robin
    load_assignment:
      cluster_name: zipkin
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: 127.0.0.1
                port_value: ZIPKIN
`;

const SERVICE1 = `
static_resources:
  listeners:
  - address:
      socket_address:
        address: 127.0.0.1
        port_value: 0
    traffic_direction: INBOUND
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.config.filter.network.http_connection_manager.v2.HttpConnectionManager
          tracing:
            provider:
              name: envoy.tracers.zipkin
              typed_config:
                "@type": type.googleapis.com/envoy.config.trace.v2.ZipkinConfig
                collector_cluster: zipkin
                collector_endpoint: "/api/v2/spans"
                collector_endpoint_version: HTTP_JSON
          codec_type: auto
          stat_prefix: ingress_http
          route_config:
            name: service1_route
            virtual_hosts:
            - name: service1
              domains:
              - "*"
              routes:
              - match:
                  prefix: "/"
                route:
                  cluster: local_service
                decorator:
                  operation: checkAvailability
          http_filters:
          - name: envoy.filters.http.router
            typed_config: {}
  - address:
      socket_address:
        address: 127.0.0.1
        port_value: 0
    traffic_direction: OUTBOUND
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.config.filter.network.http_connection_manager.v2.HttpConnectionManager
          tracing:
            provider:
              name: envoy.tracers.zipkin
              typed_config:
                "@type": type.googleapis.com/envoy.config.trace.v2.ZipkinConfig
                collector_cluster: zipkin
                collector_endpoint: "/api/v2/spans"
                collector_endpoint_version: HTTP_JSON
          codec_type: auto
          stat_prefix: egress_http
          route_config:
            name: service2_route
            virtual_hosts:
            - name: service2
              domains:
              - "*"
              routes:
              - match:
                  prefix: "/trace/2"
                route:
                  cluster: service2
                decorator:
                  operation: checkStock
          http_filters:
          - name: envoy.filters.http.router
            typed_config: {}
  clusters:
  - name: local_service
    connect_timeout: 0.250s
    type: strict_dns
    lb_policy: round_robin
    load_assignment:
      cluster_name: local_service
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: 127.0.0.1
                port_value: SERVICE1_APP
  - name: service2
    connect_timeout: 0.250s
    type: strict_dns
    lb_policy: round_robin
    http2_protocol_options: {}
    load_assignment:
      cluster_name: service2
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: 127.0.0.1
                port_value: SERVICE2_PROXY
  - name: zipkin
    connect_timeout: 1s
    type: strict_dns
    lb_policy: round_robin
    load_assignment:
      cluster_name: zipkin
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: 127.0.0.1
                port_value: ZIPKIN
`;

const SERVICE2 = `
static_resources:
  listeners:
  - address:
      socket_address:
        address: 127.0.0.1
        port_value: 0
    traffic_direction: INBOUND
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          tracing:
            provider:
              name: envoy.tracers.zipkin
              typed_config:
                "@type": type.googleapis.com/envoy.config.trace.v2.ZipkinConfig
                collector_cluster: zipkin
                collector_endpoint: "/api/v2/spans"
                collector_endpoint_version: HTTP_JSON
          codec_type: auto
          stat_prefix: ingress_http
          route_config:
            name: local_route
            virtual_hosts:
            - name: service2
              domains:
              - "*"
              routes:
              - match:
                  prefix: "/"
                route:
                  cluster: local_service
                decorator:
                  operation: checkStock
          http_filters:
          - name: envoy.filters.http.router
            typed_config: {}
  clusters:
  - name: local_service
    connect_timeout: 0.250s
    type: strict_dns
    lb_policy: round_robin
    load_assignment:
      cluster_name: local_service
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: 127.0.0.1
                port_value: SERVICE2_APP
  - name: zipkin
    connect_timeout: 1s
    type: strict_dns
    lb_policy: round_robin
    load_assignment:
      cluster_name: zipkin
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: 127.0.0.1
                port_value: ZIPKIN
`;

/** The headers the example's service.py passes on from the request it serves. */
const TRACE_HEADERS = ['x-request-id', 'x-b3-traceid', 'x-b3-spanid', 'x-b3-parentspanid', 'x-b3-sampled', 'x-b3-flags', 'x-ot-span-context'];

interface Span {
  readonly traceId: string;
  readonly id: string;
  readonly parentId?: string;
  readonly name: string;
  readonly kind: string;
}

async function serve(handler: http.RequestListener): Promise<http.Server> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const portOf = (server: http.Server): number => (server.address() as AddressInfo).port;

describe("Envoy 1.16's zipkin-tracing example", { timeout: 60_000 }, () => {
  const spans: Span[] = [];
  const servers: http.Server[] = [];
  const proxies: RunningProxy[] = [];
  let frontPort: number;

  before(async () => {
    const zipkin = await serve((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (req.url === '/api/v2/spans') spans.push(...(JSON.parse(Buffer.concat(chunks).toString()) as Span[]));
        res.writeHead(202).end();
      });
    });
    const service2App = await serve((_req, res) => res.end('Hello from behind Envoy (service 2)!'));
    servers.push(zipkin, service2App);
    const load = (text: string, ports: Record<string, number>): Record<string, unknown> => {
      for (const [name, port] of Object.entries(ports)) text = text.replace(name, String(port));
      return yaml.load(text) as Record<string, unknown>;
    };
    const service2 = await startProxy(load(SERVICE2, { SERVICE2_APP: portOf(service2App), ZIPKIN: portOf(zipkin) }), ['--concurrency', '1']);
    proxies.push(service2);
    const [service2Port] = await listenerPorts(service2);
    // service1's app calls service2 through its proxy's egress listener, passing the trace on.
    let egressPort = 0;
    const service1App = await serve((req, res) => {
      const headers = Object.fromEntries(TRACE_HEADERS.flatMap((name) => (req.headers[name] === undefined ? [] : [[name, String(req.headers[name])]])));
      http.get({ host: '127.0.0.1', port: egressPort, path: '/trace/2', headers }, (reply) => {
        reply.resume();
        reply.on('end', () => res.end(`Hello from behind Envoy (service 1)! (service 2 said ${reply.statusCode})`));
      });
    });
    servers.push(service1App);
    const service1 = await startProxy(
      load(SERVICE1, { SERVICE1_APP: portOf(service1App), SERVICE2_PROXY: service2Port!, ZIPKIN: portOf(zipkin) }),
      ['--concurrency', '1'],
    );
    proxies.push(service1);
    const [ingressPort, egress] = await listenerPorts(service1);
    egressPort = egress!;
    const front = await startProxy(load(FRONT, { SERVICE1_PROXY: ingressPort!, ZIPKIN: portOf(zipkin) }), ['--concurrency', '1']);
    proxies.push(front);
    [frontPort] = (await listenerPorts(front)) as [number];
  });

  after(async () => {
    for (const proxy of proxies) await proxy.cleanup();
    for (const server of servers) await new Promise((resolve) => server.close(resolve));
  });

  test('curl localhost:8000/trace/1 goes through all three proxies; the collector gets one trace of four spans', async () => {
    const reply = await request(frontPort, { path: '/trace/1' });
    assert.deepEqual([reply.status, reply.body], [200, 'Hello from behind Envoy (service 1)! (service 2 said 200)']);
    const traceId = reply.headers['x-b3-traceid'];
    assert.match(String(traceId), /^[0-9a-f]{16}$/);
    // Each proxy's reporter flushes its batch within tracing.zipkin.flush_interval_ms (5 s).
    const trace = await waitFor('four spans', () => {
      const ours = spans.filter((span) => span.traceId === traceId);
      return ours.length >= 4 ? ours : undefined;
    }, 20_000);
    assert.equal(trace.length, 4);
    const byKind = (kind: string) => trace.filter((span) => span.kind === kind).map((span) => span.name).sort();
    assert.deepEqual(byKind('CLIENT'), ['checkAvailability', 'checkStock']);
    assert.deepEqual(byKind('SERVER'), ['checkAvailability', 'checkStock']);
    // One root: the front's client span, whose id service1's server span shares (shared_span_context
    // defaults to true); service1's egress and service2's ingress hang off it, sharing their id.
    const ids = new Set(trace.map((span) => span.id));
    const roots = trace.filter((span) => span.parentId === undefined || !ids.has(span.parentId));
    assert.deepEqual([...new Set(roots.map((span) => span.id))], [traceId], JSON.stringify(trace));
    assert.ok(trace.filter((span) => span.name === 'checkStock').every((span) => span.parentId === traceId));
  });
});
