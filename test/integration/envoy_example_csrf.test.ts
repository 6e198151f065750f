// Envoy 1.16's examples/csrf, as its README runs it: the same-site front-envoy.yaml (a v2 file:
// v2 types, per_filter_config and `config` Structs; its service, ports and access log pointed
// here) takes the cross-site page's POSTs, made here as the browser makes them (Origin
// http://localhost:8002): /csrf/disabled and /csrf/additional_origin succeed, /csrf/shadow succeeds
// and is counted invalid, the enabled catch-all is refused 403 `Invalid origin`; a same-site POST
// succeeds; then the README's `curl .../stats | grep csrf` counts.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as yaml from 'js-yaml';
import { request } from '../helpers/http_peers';
import { listenerPorts, makeTempDir, type RunningProxy, startProxy } from '../helpers/proxy_process';

/** The same-site front-envoy.yaml as Envoy 1.16 shipped it; PORT and LOG stand for what the test picks. */
const EXAMPLE = `
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
          "@type": type.googleapis.com/envoy.config.filter.network.http_connection_manager.v2.HttpConnectionManager
          codec_type: auto
          stat_prefix: ingress_http
          access_log:
            - name: envoy.access_loggers.file
              typed_config:
                "@type": type.googleapis.com/envoy.config.accesslog.v2.FileAccessLog
                path: "LOG"
          route_config:
            name: local_route
            virtual_hosts:
            - name: www
              domains:
              - "*"
              cors:
                allow_origin:
                - "*"
                filter_enabled:
                  default_value:
                    numerator: 100
                    denominator: HUNDRED
              per_filter_config:
                envoy.filters.http.csrf:
                  filter_enabled:
                    default_value:
                      numerator: 100
                      denominator: HUNDRED
                    runtime_key: csrf.www.enabled
                  shadow_enabled:
                    default_value:
                      numerator: 0
                      denominator: HUNDRED
                    runtime_key: csrf.www.shadow_enabled
              routes:
              - match:
                  prefix: "/csrf/disabled"
                route:
                  cluster: generic_service
                per_filter_config:
                  envoy.filters.http.csrf:
                    filter_enabled:
                      default_value:
                        numerator: 0
                        denominator: HUNDRED
              - match:
                  prefix: "/csrf/shadow"
                route:
                  cluster: generic_service
                per_filter_config:
                  envoy.filters.http.csrf:
                    filter_enabled:
                      default_value:
                        numerator: 0
                        denominator: HUNDRED
                    shadow_enabled:
                      default_value:
                        numerator: 100
                        denominator: HUNDRED
              - match:
                  prefix: "/csrf/additional_origin"
                route:
                  cluster: generic_service
                per_filter_config:
                  envoy.filters.http.csrf:
                    filter_enabled:
                      default_value:
                        numerator: 100
                        denominator: HUNDRED
                    additional_origins:
                    - regex: .*
              - match:
                  prefix: "/"
                route:
                  cluster: generic_service
          http_filters:
          - name: envoy.filters.http.cors
            typed_config: {}
          - name: envoy.filters.http.csrf
            config:
              filter_enabled:
                default_value:
                  numerator: 0
                  denominator: HUNDRED
          - name: envoy.filters.http.router
            typed_config: {}
  clusters:
  - name: generic_service
    connect_timeout: 0.25s
    type: strict_dns
    lb_policy: round_robin
    http2_protocol_options: {}
    load_assignment:
      cluster_name: generic_service
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: 127.0.0.1
                port_value: PORT
`;

/** The cross-site page's origin, as the README serves it. */
const CROSS_SITE = 'http://localhost:8002';

describe("Envoy 1.16's csrf example", { timeout: 30_000 }, () => {
  let service: http2.Http2Server;
  let proxy: RunningProxy;
  let port: number;
  let dir: string;

  before(async () => {
    // The example's service speaks HTTP/2 (the cluster's http2_protocol_options).
    service = http2.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end('Success!'));
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    dir = makeTempDir();
    const config = EXAMPLE.replace('PORT', String((service.address() as AddressInfo).port)).replace('LOG', path.join(dir, 'access.log'));
    proxy = await startProxy(yaml.load(config) as Record<string, unknown>);
    // The example's listener has no name: its port is the one /listeners shows.
    [port] = (await listenerPorts(proxy)) as [number];
  });

  after(async () => {
    await proxy?.cleanup();
    await new Promise((resolve) => service?.close(resolve));
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The page's form POST to the same-site proxy; `host` is the same-site proxy's own address. */
  const post = (route: string, origin = CROSS_SITE) => request(port, { method: 'POST', path: route, body: 'x', headers: { origin, host: 'localhost:8000' } });

  test('a cross-site POST: disabled and additional_origin succeed, shadow succeeds, enabled is refused', async () => {
    assert.deepEqual([(await post('/csrf/disabled')).status, (await post('/csrf/disabled')).body], [200, 'Success!']);
    assert.equal((await post('/csrf/shadow')).status, 200);
    assert.equal((await post('/csrf/additional_origin')).status, 200);
    const refused = await post('/csrf/enabled');
    assert.deepEqual([refused.status, refused.body], [403, 'Invalid origin']);
  });

  test('a same-site POST succeeds everywhere', async () => {
    assert.equal((await post('/csrf/enabled', 'http://localhost:8000')).status, 200);
  });

  test("the README's stats", async () => {
    // Invalid: the shadow route's and the enabled route's; valid: additional_origin's and the same-site one.
    assert.equal(await proxy.stat('http.ingress_http.csrf.request_invalid'), 2);
    assert.equal(await proxy.stat('http.ingress_http.csrf.request_valid'), 2);
  });
});
