// Envoy 1.16's examples/cors, as its README runs it: the backend's front-envoy.yaml (its service
// and ports pointed at 127.0.0.1) answers the frontend page's three requests, made here as the
// browser makes them (an Origin, a preflight for a non-simple one): /cors/open is allowed for
// every origin, /cors/disabled gets no CORS headers, /cors/restricted allows only
// *.envoyproxy.io; then the README's `curl .../stats | grep cors` counts.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as yaml from 'js-yaml';
import { request, startUpstream, type Upstream } from '../helpers/http_peers';
import { listenerPorts, type RunningProxy, startProxy } from '../helpers/proxy_process';

/** The backend's front-envoy.yaml as Envoy 1.16 shipped it; PORT stands for the backend service's. */
const EXAMPLE = String.raw`
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
            - name: www
              domains:
              - "*"
              cors:
                allow_origin_string_match:
                - safe_regex:
                    google_re2: {}
                    regex: \*
                allow_methods: "GET"
                filter_enabled:
                  default_value:
                    numerator: 100
                    denominator: HUNDRED
                  runtime_key: cors.www.enabled
                shadow_enabled:
                  default_value:
                    numerator: 0
                    denominator: HUNDRED
                  runtime_key: cors.www.shadow_enabled
              routes:
              - match:
                  prefix: "/cors/open"
                route:
                  cluster: backend_service
              - match:
                  prefix: "/cors/disabled"
                route:
                  cluster: backend_service
                  cors:
                    filter_enabled:
                      default_value:
                        numerator: 0
                        denominator: HUNDRED
              - match:
                  prefix: "/cors/restricted"
                route:
                  cluster: backend_service
                  cors:
                    allow_origin_string_match:
                    - safe_regex:
                        google_re2: {}
                        regex: .*\.envoyproxy\.io
                    allow_methods: "GET"
              - match:
                  prefix: "/"
                route:
                  cluster: backend_service
          http_filters:
          - name: envoy.filters.http.cors
            typed_config: {}
          - name: envoy.filters.http.router
            typed_config: {}
  clusters:
  - name: backend_service
    connect_timeout: 0.25s
    type: strict_dns
    lb_policy: round_robin
    load_assignment:
      cluster_name: backend_service
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: 127.0.0.1
                port_value: PORT
`;

/** The frontend page's origin, as the README serves it. */
const FRONTEND = 'http://localhost:8000';

describe("Envoy 1.16's cors example", { timeout: 30_000 }, () => {
  let backend: Upstream;
  let proxy: RunningProxy;
  let port: number;

  before(async () => {
    backend = await startUpstream('backendservice', (_req, res) => res.end('Success!'));
    proxy = await startProxy(yaml.load(EXAMPLE.replace('PORT', String(backend.port))) as Record<string, unknown>);
    // The example's listener has no name: its port is the one /listeners shows.
    [port] = (await listenerPorts(proxy)) as [number];
  });

  after(async () => {
    await proxy?.cleanup();
    await backend?.close();
  });

  /** What the page's fetch() does: a preflight (it sends a custom header), then the GET. */
  const browserFetch = async (path: string) => {
    const preflight = await request(port, {
      method: 'OPTIONS',
      path,
      headers: { origin: FRONTEND, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-requested-with' },
    });
    const get = await request(port, { path, headers: { origin: FRONTEND } });
    return { preflight, get };
  };

  test('/cors/open: the preflight is answered here and the response allows the page', async () => {
    const { preflight, get } = await browserFetch('/cors/open');
    assert.equal(preflight.status, 200);
    assert.equal(preflight.headers['access-control-allow-origin'], FRONTEND);
    assert.equal(preflight.headers['access-control-allow-methods'], 'GET');
    assert.deepEqual([get.status, get.body, get.headers['access-control-allow-origin']], [200, 'Success!', FRONTEND]);
  });

  test('/cors/disabled: no CORS headers, so the browser refuses the answer', async () => {
    const { preflight, get } = await browserFetch('/cors/disabled');
    assert.equal(preflight.headers['access-control-allow-origin'], undefined);
    assert.equal(get.headers['access-control-allow-origin'], undefined);
  });

  test('/cors/restricted: only *.envoyproxy.io origins are allowed', async () => {
    const { get } = await browserFetch('/cors/restricted');
    assert.equal(get.headers['access-control-allow-origin'], undefined);
    const allowed = await request(port, { path: '/cors/restricted', headers: { origin: 'https://www.envoyproxy.io' } });
    assert.equal(allowed.headers['access-control-allow-origin'], 'https://www.envoyproxy.io');
  });

  test("the README's stats: origins judged valid and invalid", async () => {
    // Valid: open's two requests and the envoyproxy.io one; invalid: restricted's two from the page.
    assert.equal(await proxy.stat('http.ingress_http.cors.origin_valid'), 3);
    assert.equal(await proxy.stat('http.ingress_http.cors.origin_invalid'), 2);
  });
});
