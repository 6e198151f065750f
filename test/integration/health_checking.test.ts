// Active health checking with the real proxy (--concurrency 2): the supervisor checks upstreams
// that the test turns bad and good; /clusters shows each verdict, and traffic through both
// workers follows it. HTTP, TCP and gRPC checkers, with short intervals; every wait is a poll
// with a deadline.

import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { describe, test } from 'node:test';
import { httpListener } from '../helpers/config_fixtures';
import { closeServer, listen, startUpstream, type Upstream } from '../helpers/http_peers';
import { request, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { socketOwner } from '../helpers/socket_owner';

const TIMEOUT = { timeout: 60_000 };

/** A cluster with three endpoints on 127.0.0.1 and one health check. */
function cluster(ports: readonly number[], healthCheck: Record<string, unknown>): Record<string, unknown> {
  return {
    name: 'backend',
    type: 'STATIC',
    connect_timeout: '1s',
    load_assignment: {
      cluster_name: 'backend',
      endpoints: [{ lb_endpoints: ports.map((port) => ({ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } })) }],
    },
    health_checks: [{ timeout: '1s', interval: '0.1s', no_traffic_interval: '0.1s', unhealthy_threshold: 2, healthy_threshold: 2, ...healthCheck }],
  };
}

/** The host's health_flags line of GET /clusters. */
async function healthFlags(proxy: RunningProxy, port: number): Promise<string> {
  const line = (await proxy.admin('/clusters')).body.split('\n').find((l) => l.startsWith(`backend::127.0.0.1:${port}::health_flags::`));
  return line?.slice(line.lastIndexOf('::') + 2) ?? '';
}

function waitForFlags(proxy: RunningProxy, port: number, flags: string): Promise<true> {
  return waitFor(`127.0.0.1:${port} ${flags}`, async () => ((await healthFlags(proxy, port)) === flags ? true : undefined), 10_000);
}

describe('active health checking', TIMEOUT, () => {
  test('HTTP: a failing host leaves rotation in both workers, and returns after healthy_threshold passes', async () => {
    const good = [true, true, true];
    const checks: { upstream: number; status: number; userAgent: string | undefined; host: string | undefined }[] = [];
    const traffic: { upstream: number; worker: number | undefined }[] = [];
    let workers: number[] = [];
    const upstreams: Upstream[] = [];
    for (const i of [0, 1, 2]) {
      upstreams.push(
        await startUpstream(`u${i}`, (req, res) => {
          if (req.url === '/healthz') {
            const status = good[i] ? 200 : 503;
            checks.push({ upstream: i, status, userAgent: req.headers['user-agent'], host: req.headers.host });
            res.writeHead(status).end();
            return;
          }
          traffic.push({ upstream: i, worker: socketOwner(req.socket.remotePort!, workers) });
          res.end(`u${i}`);
        }),
      );
    }
    const ports = upstreams.map((u) => u.port);
    let proxy: RunningProxy | undefined;
    try {
      proxy = await startProxy(
        {
          static_resources: {
            listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }])],
            // A pending success waits healthy_edge_interval, long enough for the poll to see the host still failed.
            clusters: [cluster(ports, { healthy_edge_interval: '0.5s', http_health_check: { path: '/healthz' } })],
          },
        },
        ['--concurrency', '2'],
      );
      const running = proxy;
      workers = proxy.groupPids().filter((p) => p !== running.pid);
      assert.equal(workers.length, 2);
      const listener = await proxy.listenerPort('in');
      for (const port of ports) assert.equal(await healthFlags(proxy, port), 'healthy');
      assert.equal(checks[0]!.userAgent, 'proxy/HC');
      assert.equal(checks[0]!.host, 'backend');

      good[1] = false;
      await waitForFlags(proxy, ports[1]!, '/failed_active_hc');
      // Both workers have the verdict: traffic from either reaches only the good hosts.
      traffic.length = 0;
      for (let i = 0; i < 40 || new Set(traffic.map((t) => t.worker)).size < 2; i++) {
        if (i >= 400) assert.fail('one worker took every connection');
        await request(`http://127.0.0.1:${listener}/`, { headers: { connection: 'close' } });
      }
      assert.deepEqual(new Set(traffic.map((t) => t.upstream)), new Set([0, 2]));
      assert.equal(new Set(traffic.map((t) => t.worker)).size, 2);

      const passedBefore = checks.filter((c) => c.upstream === 1 && c.status === 200).length;
      good[1] = true;
      await waitForFlags(proxy, ports[1]!, 'healthy');
      const passes = checks.filter((c) => c.upstream === 1 && c.status === 200).length - passedBefore;
      assert.ok(passes >= 2, `healthy after ${passes} passing check(s)`);
      traffic.length = 0;
      for (let i = 0; i < 30; i++) await request(`http://127.0.0.1:${listener}/`, { headers: { connection: 'close' } });
      assert.ok(traffic.some((t) => t.upstream === 1), 'the host is back in rotation');

      assert.ok((await proxy.stat('cluster.backend.health_check.attempt'))! > 0);
      assert.ok((await proxy.stat('cluster.backend.health_check.failure'))! > 0);
      assert.equal(await proxy.stat('cluster.backend.health_check.passive_failure'), 0);
      assert.equal(await proxy.stat('cluster.backend.health_check.healthy'), 3);
    } finally {
      await proxy?.cleanup();
      await Promise.all(upstreams.map((u) => u.close()));
    }
  });

  test('TCP: send and receive payloads; a host that hangs up fails after unhealthy_threshold and returns', async () => {
    const good = [true, true, true];
    const servers: net.Server[] = [];
    for (const i of [0, 1, 2]) {
      const server = net.createServer((socket) => {
        socket.on('error', () => undefined);
        socket.on('data', (data) => {
          if (!data.includes('PING')) return;
          if (good[i]) socket.write('..PO');
          if (good[i]) socket.write('NG..');
          else socket.destroy();
        });
      });
      await listen(server);
      servers.push(server);
    }
    const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
    let proxy: RunningProxy | undefined;
    try {
      proxy = await startProxy(
        {
          static_resources: {
            clusters: [
              cluster(ports, { tcp_health_check: { send: { text: Buffer.from('PING').toString('hex') }, receive: [{ binary: Buffer.from('PONG').toString('base64') }] } }),
            ],
          },
        },
        ['--concurrency', '2'],
      );
      for (const port of ports) assert.equal(await healthFlags(proxy, port), 'healthy');
      good[2] = false;
      await waitForFlags(proxy, ports[2]!, '/failed_active_hc');
      assert.ok((await proxy.stat('cluster.backend.health_check.network_failure'))! >= 2);
      good[2] = true;
      await waitForFlags(proxy, ports[2]!, 'healthy');
    } finally {
      await proxy?.cleanup();
      await Promise.all(servers.map((s) => closeServer(s)));
    }
  });

  test('gRPC: grpc.health.v1.Health/Check over h2c; NOT_SERVING fails the host at once, SERVING brings it back', async () => {
    let status = 1;
    const seen: { path: string | undefined; authority: string | undefined; body: Buffer }[] = [];
    const server = http2.createServer();
    server.on('stream', (stream, headers) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        seen.push({ path: headers[':path'], authority: headers[':authority'], body: Buffer.concat(chunks) });
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        // HealthCheckResponse { status = 1 (SERVING) | 2 (NOT_SERVING) }.
        stream.end(Buffer.from([0, 0, 0, 0, 2, 0x08, status]));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    let proxy: RunningProxy | undefined;
    try {
      proxy = await startProxy(
        { static_resources: { clusters: [cluster([port], { grpc_health_check: { service_name: 'svc', authority: 'health.example' } })] } },
        ['--concurrency', '2'],
      );
      assert.equal(await healthFlags(proxy, port), 'healthy');
      assert.equal(seen[0]!.path, '/grpc.health.v1.Health/Check');
      assert.equal(seen[0]!.authority, 'health.example');
      assert.deepEqual([...seen[0]!.body], [0, 0, 0, 0, 5, 0x0a, 3, ...Buffer.from('svc')]);
      status = 2;
      await waitForFlags(proxy, port, '/failed_active_hc');
      status = 1;
      await waitForFlags(proxy, port, 'healthy');
    } finally {
      await proxy?.cleanup();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test('a health-checked cluster starts failed: hosts with no answer stay out of rotation from the start', async () => {
    const upstream = await startUpstream('up', (req, res) => res.writeHead(req.url === '/healthz' ? 500 : 200).end('up'));
    let proxy: RunningProxy | undefined;
    try {
      proxy = await startProxy(
        {
          static_resources: {
            listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }])],
            clusters: [{ ...cluster([upstream.port], { http_health_check: { path: '/healthz' } }), common_lb_config: { healthy_panic_threshold: { value: 0 } } }],
          },
        },
        ['--concurrency', '2'],
      );
      assert.equal(await healthFlags(proxy, upstream.port), '/failed_active_hc');
      const listener = await proxy.listenerPort('in');
      const reply = await request(`http://127.0.0.1:${listener}/`);
      assert.equal(reply.status, 503);
    } finally {
      await proxy?.cleanup();
      await upstream.close();
    }
  });
  test('every host failing: the panic threshold routes to all of them (lb_healthy_panic), as in Envoy', async () => {
    const upstreams = [
      await startUpstream('p0', (req, res) => res.writeHead(req.url === '/healthz' ? 500 : 200).end('p0')),
      await startUpstream('p1', (req, res) => res.writeHead(req.url === '/healthz' ? 500 : 200).end('p1')),
    ];
    const ports = upstreams.map((u) => u.port);
    let proxy: RunningProxy | undefined;
    try {
      proxy = await startProxy(
        {
          static_resources: {
            listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }])],
            clusters: [cluster(ports, { http_health_check: { path: '/healthz' } })],
          },
        },
        ['--concurrency', '2'],
      );
      for (const port of ports) assert.equal(await healthFlags(proxy, port), '/failed_active_hc');
      const listener = await proxy.listenerPort('in');
      const bodies = new Set<string>();
      for (let i = 0; i < 20; i++) {
        const reply = await request(`http://127.0.0.1:${listener}/`, { headers: { connection: 'close' } });
        assert.equal(reply.status, 200);
        bodies.add(reply.body);
      }
      assert.deepEqual(bodies, new Set(['p0', 'p1']));
      assert.ok((await proxy.stat('cluster.backend.lb_healthy_panic'))! >= 20);
      assert.equal(await proxy.stat('cluster.backend.upstream_cx_none_healthy'), 0);
    } finally {
      await proxy?.cleanup();
      await Promise.all(upstreams.map((u) => u.close()));
    }
  });
});
