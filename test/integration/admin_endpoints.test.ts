// The admin listener's rules and endpoints on the real binary: method rules (405 that changes
// nothing, the GET-mutation warning), the browser checks (403 for cross-site and rebound
// requests, curl unaffected), Envoy's fallback headers, 404 with help, and /certs, /memory,
// /init_dump, /config_dump's parameters, /reopen_logs and /drain_listeners.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { HttpResult, livePidsWhere, makeTempDir, request, RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const BOOTSTRAP = {
  static_resources: {
    listeners: [httpListener('http_in', 0, [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'hi' } } }])],
    clusters: [localCluster('web', 1)],
  },
};

function assertFallbackHeaders(r: HttpResult): void {
  assert.ok(r.headers['content-type'], 'a content type');
  assert.equal(r.headers['x-content-type-options'], 'nosniff');
  assert.equal(r.headers['cache-control'], 'no-cache, max-age=0');
}

describe('admin methods, browser checks and endpoints', { timeout: 90_000 }, () => {
  let proxy: RunningProxy;
  let logDir: string;
  let logPath: string;
  let port: number;
  const call = (pq: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}) => request(proxy.adminUrl + pq, opts);
  const logText = () => fs.readdirSync(logDir).map((f) => fs.readFileSync(path.join(logDir, f), 'utf8')).join('');

  before(async () => {
    logDir = makeTempDir();
    logPath = path.join(logDir, 'proxy.log');
    proxy = await startProxy(BOOTSTRAP, ['--concurrency', '2', '--log-path', logPath]);
    port = Number(new URL(proxy.adminUrl).port);
  });

  after(async () => {
    await proxy?.cleanup();
    if (logDir) fs.rmSync(logDir, { recursive: true, force: true });
  });

  test('OPTIONS, DELETE and HEAD on /quitquitquit: 405 with allow, and the server keeps running', async () => {
    for (const method of ['OPTIONS', 'DELETE', 'HEAD']) {
      const r = await call('/quitquitquit', { method });
      assert.equal(r.status, 405, method);
      assert.equal(r.headers.allow, 'POST');
      assertFallbackHeaders(r);
      if (method !== 'HEAD') assert.equal(r.body, `Method ${method} not allowed, POST required.\n`);
    }
    assert.equal((await call('/ready')).status, 200);
    assert.equal(proxy.child.exitCode, null);
  });

  test('reads answer GET, HEAD (no body) and POST; other methods get 405', async () => {
    const head = await call('/server_info', { method: 'HEAD' });
    assert.deepEqual([head.status, head.body], [200, '']);
    assert.equal((await call('/ready', { method: 'POST' })).status, 200);
    const put = await call('/stats', { method: 'PUT' });
    assert.deepEqual([put.status, put.headers.allow, put.body], [405, 'GET, HEAD, POST', 'Method PUT not allowed, GET required.\n']);
  });

  test('a mutation over GET still works and logs the warning naming path and method', async () => {
    const r = await call('/reset_counters');
    assert.deepEqual([r.status, r.body], [200, 'OK\n']);
    await waitFor('the warning', () => (logText().includes('admin path "/reset_counters" mutates state, method=GET rather than POST') ? true : undefined));
  });

  test('every endpoint: its status, content type and body shape', async () => {
    const TEXT = /^text\/plain; charset=UTF-8$/;
    const JSON_TYPE = /^application\/json$/;
    const cases: [method: string, target: string, status: number, type: RegExp, body: RegExp][] = [
      ['GET', '/', 200, /^text\/html; charset=UTF-8$/, /<table/],
      ['GET', '/help', 200, TEXT, /^admin commands are:\n( {2}\/\S*: .+\n)+$/],
      ['GET', '/dashboard.js', 200, /^text\/javascript; charset=UTF-8$/, /^'use strict';\n\(function dashboardMain\(\) \{/],
      ['GET', '/dashboard.css', 200, /^text\/css; charset=UTF-8$/, /\.host-unhealthy\{/],
      ['GET', '/server_info', 200, TEXT, /^proxy \S+\/\S+ live \d+ \d+ 0\n$/],
      ['GET', '/ready', 200, TEXT, /^LIVE\n$/],
      ['GET', '/stats', 200, TEXT, /^server\.live: 1$/m],
      ['GET', '/stats?format=json', 200, JSON_TYPE, /^\{"stats":\[/],
      ['GET', '/stats/prometheus', 200, TEXT, /^# TYPE proxy_server_live gauge\nproxy_server_live\{\} 1$/m],
      ['GET', '/clusters', 200, TEXT, /^version_info::static\n/],
      ['GET', '/listeners', 200, TEXT, /^http_in::127\.0\.0\.1:\d+\n$/],
      ['GET', '/config_dump', 200, JSON_TYPE, /^\{\n "configs": \[/],
      ['GET', '/hot_restart_version', 200, TEXT, /^\S+\n?$/],
      ['GET', '/contention', 200, TEXT, /^Mutex contention tracing is not enabled\./],
      ['GET', '/runtime', 200, JSON_TYPE, /^\{\n "layers": \[/],
      ['POST', '/runtime_modify?shape.check=1', 200, TEXT, /^OK\n$/],
      ['GET', '/certs', 200, JSON_TYPE, /^\{\n "certificates": \[\]\n\}\n$/],
      ['GET', '/memory', 200, JSON_TYPE, /^\{\n "allocated": "\d+",/],
      ['GET', '/init_dump', 200, JSON_TYPE, /^\{\}\n$/],
      ['POST', '/logging', 200, TEXT, /^active loggers:\n( {2}\w+: \w+\n)+\n$/],
      ['POST', '/cpuprofiler?enable=n', 200, TEXT, /^OK\n$/],
      ['POST', '/reset_counters', 200, TEXT, /^OK\n$/],
      ['POST', '/reopen_logs', 200, TEXT, /^OK\n$/],
      ['POST', '/healthcheck/fail', 200, TEXT, /^OK\n$/],
      ['POST', '/healthcheck/ok', 200, TEXT, /^OK\n$/],
    ];
    for (const [method, target, status, type, body] of cases) {
      const r = await call(target, { method });
      assert.equal(r.status, status, `${method} ${target}: ${r.body}`);
      assert.match(r.headers['content-type'] ?? '', type, `${method} ${target}`);
      assert.match(r.body, body, `${method} ${target}`);
      assertFallbackHeaders(r);
    }
  });

  test('unknown path: 404 with the help text', async () => {
    const help = (await call('/help')).body;
    const r = await call('/no/such/thing');
    assert.deepEqual([r.status, r.body], [404, 'invalid path. ' + help]);
    assertFallbackHeaders(r);
  });

  test('cross-site and rebound browser requests are refused; curl and the admin\'s own pages are not', async () => {
    const self = `127.0.0.1:${port}`;
    const refused: Record<string, string>[] = [
      { origin: 'http://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'null' },
      { origin: `http://127.0.0.1:${port + 1}` },
      // DNS rebinding: the browser thinks it talks to evil.example.
      { host: `evil.example:${port}`, origin: `http://evil.example:${port}`, 'sec-fetch-site': 'same-origin' },
    ];
    for (const headers of refused) {
      const r = await call('/reset_counters', { method: 'POST', headers });
      assert.equal(r.status, 403, JSON.stringify(headers));
      assert.match(r.body, /^[^\n]+\n$/);
      assertFallbackHeaders(r);
    }
    // A rebound page may not read either.
    assert.equal((await call('/config_dump', { headers: { host: `evil.example:${port}`, 'sec-fetch-site': 'same-origin' } })).status, 403);
    const accepted: Record<string, string>[] = [
      {},
      { origin: `http://${self}`, 'sec-fetch-site': 'same-origin' },
      { host: `localhost:${port}`, origin: `http://localhost:${port}`, 'sec-fetch-site': 'same-origin' },
      { 'sec-fetch-site': 'none' },
    ];
    for (const headers of accepted) {
      const r = await call('/reset_counters', { method: 'POST', headers });
      assert.deepEqual([r.status, r.body], [200, 'OK\n'], JSON.stringify(headers));
    }
    // A cross-site read is harmless (the page cannot see the answer) and is served.
    assert.equal((await call('/ready', { headers: { 'sec-fetch-site': 'cross-site' } })).status, 200);
  });

  test('the home page: HTML with frame and content security headers, links and POST forms with fields', async () => {
    const r = await call('/');
    assertFallbackHeaders(r);
    assert.equal(r.headers['content-type'], 'text/html; charset=UTF-8');
    assert.equal(r.headers['x-frame-options'], 'DENY');
    // Script and style only as files from the admin itself: nothing inline may run.
    assert.match(r.headers['content-security-policy'] as string, /^default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; .*frame-ancestors 'none'/);
    assert.doesNotMatch(r.headers['content-security-policy'] as string, /unsafe-|sha256-|nonce-/);
    assert.match(r.body, /<a href='certs'>certs<\/a>/);
    assert.match(r.body, /<form action='drain_listeners' method='post' class='home-form' id='form-drain_listeners' data-confirm='Stop every listener from accepting connections\?'><button>drain_listeners<\/button><\/form>/);
    assert.match(r.body, /<input type='checkbox' name='graceful' form='form-drain_listeners'/);
    assert.match(r.body, /<form action='stats' method='get' class='home-form'>.*<input type='text' name='filter'/);
    assert.deepEqual(r.body.match(/<script[^>]*>[^<]*<\/script>/gi), ["<script src='dashboard.js' defer></script>"]);
    assert.doesNotMatch(r.body, /<style|\sstyle=|\son[a-z]+=/i);
    assert.match(r.body, /<form action='quitquitquit' method='post' class='home-form' id='form-quitquitquit' data-confirm='Shut the server down\?'>/);
  });

  test('a POST form body counts as the query', async () => {
    const r = await call('/config_dump', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'resource=nope' });
    assert.deepEqual([r.status, r.body], [404, 'nope not found in config dump\n']);
  });

  test('GET /certs: Envoy\'s empty certificate list', async () => {
    const r = await call('/certs');
    assert.deepEqual([r.status, r.headers['content-type'], r.body], [200, 'application/json', '{\n "certificates": []\n}\n']);
  });

  test('GET /memory: Envoy\'s six uint64 fields as strings, summed over supervisor and workers', async () => {
    const r = await call('/memory');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    const memory = JSON.parse(r.body) as Record<string, string>;
    assert.deepEqual(Object.keys(memory), ['allocated', 'heap_size', 'pageheap_unmapped', 'pageheap_free', 'total_thread_cache', 'total_physical_bytes']);
    for (const value of Object.values(memory)) assert.match(value, /^\d+$/);
    // Three Node processes hold well over 3 x 20 MB resident.
    assert.ok(Number(memory.total_physical_bytes) > 60e6, memory.total_physical_bytes);
    assert.ok(Number(memory.heap_size) >= Number(memory.allocated));
  });

  test('GET /init_dump: {} once serving; ?mask=listener the same; an unknown mask is a 400', async () => {
    for (const q of ['', '?mask=listener']) {
      const r = await call(`/init_dump${q}`);
      assert.deepEqual([r.status, r.headers['content-type'], r.body], [200, 'application/json', '{}\n']);
    }
    const bad = await call('/init_dump?mask=cluster');
    assert.equal(bad.status, 400);
    assert.match(bad.body, /^unknown mask 'cluster'[^\n]*\n$/);
  });

  test('GET /config_dump: ?resource=, ?mask= and Envoy\'s 404 and 400', async () => {
    const clusters = JSON.parse((await call('/config_dump?resource=static_clusters')).body);
    assert.deepEqual(
      clusters.configs.map((c: any) => [c['@type'], c.cluster.name]),
      [['type.googleapis.com/envoy.admin.v3.ClustersConfigDump.StaticCluster', 'web']],
    );
    const masked = JSON.parse((await call('/config_dump?resource=static_clusters&mask=cluster.name')).body);
    assert.deepEqual(masked.configs, [
      { '@type': 'type.googleapis.com/envoy.admin.v3.ClustersConfigDump.StaticCluster', cluster: { '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', name: 'web' } },
    ]);
    const onlyTimes = JSON.parse((await call('/config_dump?mask=last_updated')).body);
    assert.equal(onlyTimes.configs[0]['@type'], 'type.googleapis.com/envoy.admin.v3.BootstrapConfigDump');
    assert.deepEqual(Object.keys(onlyTimes.configs[0]), ['@type', 'last_updated']);
    assert.deepEqual(await call('/config_dump?resource=nope').then((r) => [r.status, r.body]), [404, 'nope not found in config dump\n']);
    assert.deepEqual(await call('/config_dump?resource=version_info').then((r) => [r.status, r.body]), [
      400,
      'version_info is not a repeated field. Use ?mask=version_info to get only this field\n',
    ]);
    const eds = JSON.parse((await call('/config_dump?resource=static_endpoint_configs&include_eds')).body);
    assert.equal(eds.configs[0]['@type'], 'type.googleapis.com/envoy.admin.v3.EndpointsConfigDump.StaticEndpointConfig');
    assert.equal((await call('/config_dump?resource=static_endpoint_configs')).status, 404);
  });

  test('POST /reopen_logs: the log file moved away is recreated', async () => {
    fs.renameSync(logPath, `${logPath}.1`);
    const r = await call('/reopen_logs', { method: 'POST' });
    assert.deepEqual([r.status, r.body], [200, 'OK\n']);
    await waitFor('the reopened log file', () => (fs.existsSync(logPath) ? true : undefined));
    await call('/reopen_logs');
    await waitFor('a line in the new file', () => (fs.readFileSync(logPath, 'utf8').includes('"/reopen_logs" mutates state') ? true : undefined));
  });
});

describe('POST /drain_listeners', { timeout: 90_000 }, () => {
  /** What a fresh connection to the listener gets: an answer, a refusal, or nothing for a second. */
  const connects = (port: number) =>
    new Promise<'served' | 'refused' | 'hung'>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => s.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n'));
      s.setTimeout(1000, () => (s.destroy(), resolve('hung')));
      s.once('data', () => (s.destroy(), resolve('served')));
      s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED' ? 'refused' : 'hung'));
    });

  test('stops every worker\'s listeners and counts listener_manager.listener_stopped per worker', async () => {
    const proxy = await startProxy(BOOTSTRAP, ['--concurrency', '2']);
    try {
      const port = await proxy.listenerPort('http_in');
      assert.equal(await connects(port), 'served');
      const r = await proxy.admin('/drain_listeners', 'POST');
      assert.deepEqual([r.status, r.body], [200, 'OK\n']);
      await waitFor('listener_stopped', async () => ((await proxy.stat('listener_manager.listener_stopped')) === 2 ? true : undefined));
      // The socket is closed everywhere, as Envoy closes it: connecting is refused at once.
      assert.equal(await connects(port), 'refused');
      // A worker restarted afterwards does not take the stopped listener up again: had it
      // inherited the socket (at fork), connecting would no longer be refused.
      const workerPids = () => livePidsWhere((stat) => stat.ppid === proxy.pid);
      const workers = workerPids();
      process.kill(workers[0]!, 'SIGKILL');
      await waitFor('a restarted worker', () => (workerPids().some((pid) => !workers.includes(pid)) ? true : undefined));
      assert.equal(await connects(port), 'refused');
      assert.equal((await proxy.admin('/ready')).status, 200);
    } finally {
      await proxy.cleanup();
    }
  });

  test('?inboundonly stops the INBOUND listeners only; ?graceful waits out the drain sequence', async () => {
    const inbound = { ...httpListener('inbound', 0, [{ match: { prefix: '/' }, direct_response: { status: 200 } }]), traffic_direction: 'INBOUND' };
    const config = { static_resources: { ...BOOTSTRAP.static_resources, listeners: [...BOOTSTRAP.static_resources.listeners, inbound] } };
    const proxy = await startProxy(config, ['--concurrency', '1', '--drain-time-s', '2']);
    try {
      const [port, inboundPort] = [await proxy.listenerPort('http_in'), await proxy.listenerPort('inbound')];
      assert.equal((await proxy.admin('/drain_listeners?inboundonly', 'POST')).status, 200);
      await waitFor('listener_stopped', async () => ((await proxy.stat('listener_manager.listener_stopped')) === 1 ? true : undefined));
      assert.equal(await connects(inboundPort), 'refused');
      assert.equal(await connects(port), 'served');
      const r = await proxy.admin('/drain_listeners?graceful', 'POST');
      assert.deepEqual([r.status, r.body], [200, 'OK\n']);
      const started = Date.now();
      await waitFor('listener_stopped', async () => ((await proxy.stat('listener_manager.listener_stopped')) === 2 ? true : undefined), 10_000);
      assert.ok(Date.now() - started >= 1000, 'stopped only after the drain time');
      assert.equal(await connects(port), 'refused');
    } finally {
      await proxy.cleanup();
    }
  });
});
