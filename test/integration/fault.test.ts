// proxy.filters.http.fault through the real binary, over HTTP/1.1 and h2c alike: header-controlled
// aborts (HTTP and gRPC), delays (the request body held and delivered after) and response rate
// limits; fixed aborts aimed by upstream_cluster and header matchers, turned on by a runtime key;
// max_active_faults; the fault.* statistics in /stats and /stats/prometheus; --mode validate
// refuses bad HTTPFaults by field path.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { servableV3 } from '../helpers/cli_bootstraps';
import { mapLimited, runToExit } from '../helpers/cli_runs';
import { httpListener, type Json, localCluster } from '../helpers/config_fixtures';
import { listenerClients, startUpstream, type Upstream } from '../helpers/http_peers';
import { makeTempDir, type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
const FAULT_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault';
const ROUTER = { name: 'proxy.filters.http.router' };
const ALL = { numerator: 100 };
/** A body the rate-limited response carries: a second's worth at 1 KiB/s, and half a second more. */
const BIG = 'x'.repeat(1536);

const HEADER_FAULTS = {
  name: 'proxy.filters.http.fault',
  typed_config: {
    '@type': FAULT_TYPE,
    abort: { header_abort: {}, percentage: ALL },
    delay: { header_delay: {}, percentage: ALL },
    response_rate_limit: { header_limit: {}, percentage: ALL },
    max_active_faults: 1,
  },
};

const FIXED_FAULTS = {
  name: 'envoy.filters.http.fault',
  typed_config: {
    '@type': FAULT_TYPE,
    // 0% unless the runtime key says otherwise, which it does.
    abort: { http_status: 418, percentage: { numerator: 0 } },
    abort_percent_runtime: 'test.fixed.abort_percent',
    upstream_cluster: 'web',
    headers: [{ name: 'x-fault', present_match: true }],
  },
};

describe('fault injection on HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  const ports: Record<string, number> = {};
  const clients = listenerClients(ports);

  before(async () => {
    upstream = await startUpstream('web', (req, res, body) => res.end(req.url === '/big' ? BIG : `upstream ${body.toString()}`));
    const routes = [
      { match: { prefix: '/other' }, route: { cluster: 'other' } },
      // Its own HTTPFault replaces the filter's.
      {
        match: { prefix: '/legal' },
        route: { cluster: 'web' },
        typed_per_filter_config: { 'envoy.filters.http.fault': { '@type': FAULT_TYPE, abort: { http_status: 451, percentage: ALL } } },
      },
      { match: { prefix: '/' }, route: { cluster: 'web' } },
    ];
    const headerListener = httpListener('header', 0, routes, { stat_prefix: 'header', http_filters: [HEADER_FAULTS, ROUTER] });
    const fixedListener = httpListener('fixed', 0, routes, { stat_prefix: 'fixed', http_filters: [FIXED_FAULTS, ROUTER] });
    proxy = await startProxy({
      static_resources: { listeners: [headerListener, fixedListener], clusters: [localCluster('web', upstream.port), localCluster('other', upstream.port)] },
      layered_runtime: { layers: [{ name: 'static', static_layer: { 'test.fixed.abort_percent': 100 } }] },
    });
    ports.header = await proxy.listenerPort('header');
    ports.fixed = await proxy.listenerPort('fixed');
  });

  after(async () => {
    clients.close();
    await proxy?.cleanup();
    await upstream?.close();
  });

  for (const [protocol, send] of clients.protocols) {
    test(`${protocol}: a request without fault headers goes upstream untouched`, async () => {
      const reply = await send('header', { method: 'POST', path: '/', body: 'hello' });
      assert.deepEqual([reply.status, reply.body], [200, 'upstream hello']);
    });

    test(`${protocol}: x-proxy-fault-abort-request aborts, unless its percentage is 0`, async () => {
      const reply = await send('header', { path: '/', headers: { 'x-proxy-fault-abort-request': '503' } });
      assert.deepEqual([reply.status, reply.body], [503, 'fault filter abort']);
      const spared = await send('header', { path: '/', headers: { 'x-proxy-fault-abort-request': '503', 'x-proxy-fault-abort-request-percentage': '0' } });
      assert.equal(spared.status, 200);
      // Outside [200, 600): no abort.
      assert.equal((await send('header', { path: '/', headers: { 'x-proxy-fault-abort-request': '600' } })).status, 200);
    });

    test(`${protocol}: a gRPC abort is a trailers-only answer with its grpc-status`, async () => {
      const reply = await send('header', {
        method: 'POST',
        path: '/pkg.Svc/Call',
        body: '\0\0\0\0\0',
        headers: { 'content-type': 'application/grpc', 'x-proxy-fault-abort-grpc-request': '5' },
      });
      assert.deepEqual([reply.status, reply.headers['grpc-status'], reply.headers['grpc-message'], reply.body], [200, '5', 'fault filter abort', '']);
    });

    test(`${protocol}: a delay holds the request, its body included, then lets it go on`, async () => {
      const started = Date.now();
      const reply = await send('header', { method: 'POST', path: '/', body: 'held', headers: { 'x-proxy-fault-delay-request': '300' } });
      assert.deepEqual([reply.status, reply.body], [200, 'upstream held']);
      assert.ok(Date.now() - started >= 280, `delayed ${Date.now() - started} ms`);
    });

    test(`${protocol}: a delay followed by an abort`, async () => {
      const started = Date.now();
      const reply = await send('header', { path: '/', headers: { 'x-proxy-fault-delay-request': '200', 'x-proxy-fault-abort-request': '429' } });
      assert.deepEqual([reply.status, reply.body], [429, 'fault filter abort']);
      assert.ok(Date.now() - started >= 180);
    });

    test(`${protocol}: a response rate limit lets a second's worth out at once and the rest at the rate`, async () => {
      const started = Date.now();
      const reply = await send('header', { path: '/big', headers: { 'x-proxy-fault-throughput-response': '1' } });
      assert.equal(reply.body, BIG);
      // 512 bytes past the first second's 1024, at 64 bytes a sixteenth of a second.
      assert.ok(Date.now() - started >= 400, `took ${Date.now() - started} ms`);
    });

    test(`${protocol}: max_active_faults: a fault asked for while another is under way is not injected`, async () => {
      const delayed = send('header', { path: '/', headers: { 'x-proxy-fault-delay-request': '400' } });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const overflowing = await send('header', { path: '/', headers: { 'x-proxy-fault-abort-request': '503' } });
      assert.equal(overflowing.status, 200);
      assert.equal((await delayed).status, 200);
    });

    test(`${protocol}: a route's own HTTPFault replaces the filter's`, async () => {
      assert.equal((await send('header', { path: '/legal' })).status, 451);
      // The filter's header-controlled delay does not apply there.
      const started = Date.now();
      assert.equal((await send('header', { path: '/legal', headers: { 'x-proxy-fault-delay-request': '500' } })).status, 451);
      assert.ok(Date.now() - started < 400);
    });

    test(`${protocol}: a fixed abort hits the requests its cluster and headers aim at, on by its runtime key`, async () => {
      assert.deepEqual([(await send('fixed', { path: '/', headers: { 'x-fault': '1' } })).status], [418]);
      assert.equal((await send('fixed', { path: '/' })).status, 200);
      assert.equal((await send('fixed', { path: '/other', headers: { 'x-fault': '1' } })).status, 200);
    });
  }

  test('the fault statistics', async () => {
    // Per protocol: aborts 1 (503) + 1 (gRPC) + 1 (after a delay) + 2 (per route); delays 2 + 1 (the one under way); one overflow.
    assert.equal(await proxy.stat('http.header.fault.aborts_injected'), 2 * 5);
    assert.equal(await proxy.stat('http.header.fault.delays_injected'), 2 * 3);
    assert.equal(await proxy.stat('http.header.fault.response_rl_injected'), 2);
    assert.equal(await proxy.stat('http.header.fault.faults_overflow'), 2);
    assert.equal(await proxy.stat('http.header.fault.active_faults'), 0);
    assert.equal(await proxy.stat('http.fixed.fault.aborts_injected'), 2);
    const prometheus = (await proxy.admin('/stats/prometheus')).body;
    for (const name of ['aborts_injected', 'delays_injected', 'response_rl_injected', 'faults_overflow']) {
      const value = await proxy.stat(`http.header.fault.${name}`);
      assert.match(prometheus, new RegExp(`^proxy_http_fault_${name}\\{proxy_http_conn_manager_prefix="header"\\} ${value}$`, 'm'));
    }
    assert.match(prometheus, /^proxy_http_fault_active_faults\{proxy_http_conn_manager_prefix="header"\} 0$/m);
  });
});

test('--mode validate refuses HTTPFaults by field path', { timeout: 60_000 }, async () => {
  const dir = makeTempDir();
  try {
    const hcm = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config';
    const fault = (fields: Json): Json => ({ name: 'envoy.filters.http.fault', typed_config: { '@type': FAULT_TYPE, ...fields } });
    const cases: { name: string; change: (hcm: Json) => void; error: string | null }[] = [
      { name: 'valid', change: (c) => c.http_filters.unshift(fault({ abort: { http_status: 503, percentage: ALL } })), error: null },
      {
        name: 'status out of range',
        change: (c) => c.http_filters.unshift(fault({ abort: { http_status: 600 } })),
        error: `${hcm}.http_filters[0].typed_config.abort.http_status: value must be inside range [200, 600)`,
      },
      {
        name: 'a field after 1.16',
        change: (c) => c.http_filters.unshift(fault({ filter_metadata: {} })),
        error: `${hcm}.http_filters[0].typed_config.filter_metadata: filter_metadata is not implemented by this build yet (it would be ignored)`,
      },
      {
        name: 'a bad route HTTPFault',
        change: (c) => {
          c.http_filters.unshift(fault({}));
          c.route_config.virtual_hosts[0].routes[0].typed_per_filter_config = { 'envoy.fault': { '@type': FAULT_TYPE, delay: { percentage: ALL } } };
        },
        error: `${hcm}.route_config.virtual_hosts[0].routes[0].typed_per_filter_config["envoy.fault"].delay.fault_delay_secifier: is required: set one of fixed_delay, header_delay`,
      },
    ];
    const results = await mapLimited(cases, 2, (row) => {
      const config = servableV3('/dev/null');
      row.change(config.static_resources.listeners[1].filter_chains[0].filters[0].typed_config);
      const configPath = path.join(dir, `${row.name.replace(/\W+/g, '_')}.json`);
      fs.writeFileSync(configPath, JSON.stringify(config));
      return runToExit(['-c', configPath, '--mode', 'validate']).then((result) => ({ ...result, configPath }));
    });
    cases.forEach((row, i) => {
      const { code, stdout, stderr, configPath } = results[i]!;
      if (row.error === null) {
        assert.deepEqual({ code, stdout }, { code: 0, stdout: `configuration '${configPath}' OK\n` }, stderr);
        return;
      }
      assert.equal(code, 1, row.name);
      assert.ok(stderr.trimEnd().endsWith(`${configPath}: ${row.error}`), `${row.name}: ${stderr}`);
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
