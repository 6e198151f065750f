// Envoy 1.16's examples/fault-injection, as its README runs it: the example's envoy.yaml (its
// backend and port pointed at 127.0.0.1, its runtime directory a temporary one) serves requests
// untouched; enable_abort_fault_injection.sh (runtime files fault/http/abort/abort_percent = 100,
// http_status = 503, the symlink swapped) makes every request a 503; disabling it restores them;
// enable_delay_fault_injection.sh (fault/http/delay/fixed_delay_percent = 100,
// fixed_duration_ms = 3000) delays them by three seconds.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as yaml from 'js-yaml';
import { request, startUpstream, type Upstream } from '../helpers/http_peers';
import { listenerPorts, makeTempDir, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

/** The example's envoy.yaml as Envoy 1.16 shipped it; ADDRESS, PORT and RUNTIME stand for what the test picks. */
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
                  prefix: /
                route:
                  cluster: local_service
          http_filters:
          - name: envoy.filters.http.fault
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault
              abort:
                http_status: 503
                percentage:
                  numerator: 0
                  denominator: HUNDRED
              delay:
                fixed_delay: 3s
                percentage:
                  numerator: 0
                  denominator: HUNDRED
          - name: envoy.filters.http.router
  clusters:
  - name: local_service
    connect_timeout: 1s
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
                port_value: PORT
layered_runtime:
  layers:
  - name: disk_layer_0
    disk_layer:
      symlink_root: RUNTIME/current
      subdirectory: envoy
`;

describe("Envoy 1.16's fault-injection example", { timeout: 60_000 }, () => {
  let backend: Upstream;
  let proxy: RunningProxy;
  let port: number;
  let runtime: string;
  let version = 0;

  /** What the example's scripts do: a new runtime tree, then `ln -s` and `mv -T` over `current`. */
  const publish = (values: Record<string, string>): void => {
    const tree = path.join(runtime, `v${++version}`);
    for (const [key, value] of Object.entries(values)) {
      const file = path.join(tree, 'envoy', ...key.split('/'));
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `${value}\n`);
    }
    fs.mkdirSync(path.join(tree, 'envoy'), { recursive: true });
    fs.symlinkSync(tree, path.join(runtime, 'tmp'));
    fs.renameSync(path.join(runtime, 'tmp'), path.join(runtime, 'current'));
  };

  /** send_request.sh: a GET of /status/200 through the example's listener. */
  const sendRequest = () => request(port, { path: '/status/200' });

  const statusSettles = (status: number) => waitFor(`status ${status}`, async () => ((await sendRequest()).status === status ? true : undefined), 10_000);

  before(async () => {
    backend = await startUpstream('backend', (_req, res) => res.end('OK'));
    runtime = makeTempDir();
    publish({});
    const config = yaml.load(EXAMPLE.replace('PORT', String(backend.port)).replace('RUNTIME', runtime)) as Record<string, unknown>;
    proxy = await startProxy(config);
    // The example's listener has no name: its port is the one /listeners shows.
    [port] = (await listenerPorts(proxy)) as [number];
  });

  after(async () => {
    await proxy?.cleanup();
    await backend?.close();
    if (runtime !== undefined) fs.rmSync(runtime, { recursive: true, force: true });
  });

  test('without runtime settings, requests go through', async () => {
    const reply = await sendRequest();
    assert.deepEqual([reply.status, reply.body], [200, 'OK']);
  });

  test('enable_abort_fault_injection.sh: every request is a 503; disabling it restores them', async () => {
    publish({ 'fault/http/abort/abort_percent': '100', 'fault/http/abort/http_status': '503' });
    await statusSettles(503);
    const reply = await sendRequest();
    assert.deepEqual([reply.status, reply.body], [503, 'fault filter abort']);
    publish({});
    await statusSettles(200);
  });

  test('enable_delay_fault_injection.sh: every request waits three seconds', async () => {
    publish({ 'fault/http/delay/fixed_delay_percent': '100', 'fault/http/delay/fixed_duration_ms': '3000' });
    await waitFor('the delay layer', async () => {
      const runtimeJson = JSON.parse((await proxy.admin('/runtime')).body) as { entries: Record<string, unknown> };
      return runtimeJson.entries['fault.http.delay.fixed_duration_ms'] === undefined ? undefined : true;
    });
    const started = Date.now();
    assert.equal((await sendRequest()).status, 200);
    assert.ok(Date.now() - started >= 2900, `took ${Date.now() - started} ms`);
    assert.ok((await proxy.stat('http.ingress_http.fault.delays_injected'))! >= 1);
    publish({});
  });
});
