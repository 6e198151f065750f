// POST /healthcheck/fail and /healthcheck/ok end to end, with two workers: the health check
// filter (answering itself, and passing through), /server_info, /ready, the server.live and
// server.state gauges, and drain close. The upstream tells which worker sent each request (by
// the owner of the connection's proxy end, from /proc), so every worker is shown to know.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { listen } from '../helpers/http_peers';
import { makeTempDir, request, RunningProxy, spawnProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { socketOwner } from '../helpers/socket_owner';

const HCM_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';
const HEALTH_CHECK_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck';
/** Fresh connections tried before giving up on both workers serving one. */
const MAX_SWEEP = 400;

function listenerWith(name: string, healthCheck: Record<string, unknown>) {
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
    filter_chains: [
      {
        filters: [
          {
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: {
              '@type': HCM_TYPE,
              stat_prefix: name,
              route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'web' } }] }] },
              http_filters: [
                { name: 'envoy.filters.http.health_check', typed_config: { '@type': HEALTH_CHECK_TYPE, ...healthCheck } },
                { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } },
              ],
            },
          },
        ],
      },
    ],
  };
}

function bootstrap(upstreamPort: number, healthCheck: Record<string, unknown> = {}) {
  const headers = [{ name: ':path', exact_match: '/healthz' }];
  return {
    static_resources: {
      listeners: [
        listenerWith('hc_local', { pass_through_mode: false, headers, cluster_min_healthy_percentages: { web: { value: 100 } }, ...healthCheck }),
        listenerWith('hc_pass', { pass_through_mode: true, headers }),
      ],
      clusters: [
        {
          name: 'web',
          connect_timeout: '1s',
          load_assignment: { cluster_name: 'web', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstreamPort } } } }] }] },
        },
      ],
    },
  };
}

/**
 * One keep-alive request on a raw connection; the response text. With `closes`, resolves when
 * the proxy has closed the connection; otherwise once the body is in.
 */
function keepAliveResponse(port: number, closes: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /keep HTTP/1.1\r\nhost: test\r\n\r\n'));
    let text = '';
    socket.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      if (!closes && text.endsWith('from upstream')) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

describe('/healthcheck/fail and /healthcheck/ok with two workers', { timeout: 120_000 }, () => {
  let upstream: http.Server;
  let proxy: RunningProxy;
  let local: number;
  let pass: number;
  /** The proxy's worker pids, which the upstream looks its peers up among. */
  let workers: number[] = [];

  before(async () => {
    upstream = http.createServer((req, res) => {
      const worker = socketOwner(req.socket.remotePort!, workers);
      res.setHeader('x-test-worker', String(worker ?? 'unknown'));
      res.end('from upstream');
    });
    await listen(upstream);
    const upstreamPort = (upstream.address() as { port: number }).port;
    proxy = await startProxy(bootstrap(upstreamPort), ['--concurrency', '2', '--service-cluster', 'front']);
    workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    assert.equal(workers.length, 2);
    local = await proxy.listenerPort('hc_local');
    pass = await proxy.listenerPort('hc_pass');
  });

  after(async () => {
    await proxy?.cleanup();
    upstream?.closeAllConnections();
    upstream?.close();
  });

  /**
   * Requests that are not health checks, each on a fresh connection, until every worker has
   * served some: each response must say whether health checks fail.
   */
  async function sweep(failed: boolean): Promise<void> {
    const served = new Set<string>();
    for (let i = 0; i < MAX_SWEEP && served.size < workers.length; i++) {
      const r = await request(`http://127.0.0.1:${pass}/other${i}`);
      assert.equal(r.status, 200);
      assert.equal(r.headers['x-proxy-immediate-health-check-fail'], failed ? 'true' : undefined, `request ${i}`);
      served.add(String(r.headers['x-test-worker']));
    }
    assert.deepEqual([...served].sort(), workers.map(String).sort(), 'every worker served a request');
  }

  async function healthChecks(): Promise<[number, number, unknown]> {
    const l = await request(`http://127.0.0.1:${local}/healthz`);
    const p = await request(`http://127.0.0.1:${pass}/healthz`);
    assert.equal(l.headers['x-proxy-upstream-healthchecked-cluster'], 'front');
    assert.equal(p.headers['x-proxy-upstream-healthchecked-cluster'], 'front');
    return [l.status, p.status, p.headers['x-test-worker'] === undefined ? 'local reply' : 'upstream'];
  }

  async function adminState(): Promise<[string, number, string, number | undefined, number | undefined]> {
    const info = (await proxy.admin('/server_info')).body.split(' ')[2]!;
    const ready = await proxy.admin('/ready');
    return [info, ready.status, ready.body, await proxy.stat('server.live'), await proxy.stat('server.state')];
  }

  test('healthy: health checks pass, the server is live', async () => {
    assert.deepEqual(await adminState(), ['live', 200, 'LIVE\n', 1, 0]);
    assert.deepEqual(await healthChecks(), [200, 200, 'upstream']);
    await sweep(false);
    assert.doesNotMatch(await keepAliveResponse(pass, false), /connection: close/);
  });

  test('/healthcheck/fail: every worker fails health checks at once, the server is draining', async () => {
    const r = await proxy.admin('/healthcheck/fail', 'POST');
    assert.deepEqual([r.status, r.body], [200, 'OK\n']);
    // No waiting: the workers are told before the admin answers.
    assert.deepEqual(await healthChecks(), [503, 503, 'local reply']);
    await sweep(true);
    assert.deepEqual(await adminState(), ['draining', 503, 'DRAINING\n', 0, 1]);
    // Drain close: a keep-alive connection is closed after its response.
    assert.match(await keepAliveResponse(pass, true), /\r\nconnection: close\r\n/);
  });

  test('a worker started while failed fails too', async () => {
    const [victim, survivor] = workers;
    process.kill(victim!, 'SIGKILL');
    workers = await waitFor('the replacement worker', () => {
      const now = proxy.groupPids().filter((p) => p !== proxy.pid);
      return now.length === 2 && !now.includes(victim!) ? now : undefined;
    });
    const replacement = String(workers.find((p) => p !== survivor));
    // Until the replacement is ready the survivor takes every connection.
    await waitFor('the replacement serving', async () =>
      (await request(`http://127.0.0.1:${pass}/probe`)).headers['x-test-worker'] === replacement ? true : undefined,
    );
    await sweep(true);
  });

  test('/healthcheck/ok: health checks pass again everywhere, the server is live', async () => {
    const r = await proxy.admin('/healthcheck/ok', 'POST');
    assert.deepEqual([r.status, r.body], [200, 'OK\n']);
    assert.deepEqual(await healthChecks(), [200, 200, 'upstream']);
    await sweep(false);
    assert.deepEqual(await adminState(), ['live', 200, 'LIVE\n', 1, 0]);
  });
});

test('a bad health check filter field stops the proxy with its field path', { timeout: 30_000 }, async (t) => {
  const dir = makeTempDir();
  const configPath = path.join(dir, 'bootstrap.json');
  fs.writeFileSync(configPath, JSON.stringify(bootstrap(1, { cluster_min_healthy_percentages: { web: { value: 150 } } })));
  const proc = spawnProxy(['-c', configPath, '--disable-hot-restart'], { dir });
  t.after(() => proc.cleanup());
  const exit = await proc.exited;
  assert.equal(exit.code, 1);
  assert.match(
    proc.stderr,
    /static_resources\.listeners\[0\]\.filter_chains\[0\]\.filters\[0\]\.typed_config\.http_filters\[0\]\.typed_config\.cluster_min_healthy_percentages\["web"\]\.value: value must be inside range \[0, 100\]/,
  );
});
