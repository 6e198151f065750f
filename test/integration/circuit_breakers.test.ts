// Circuit breakers served by the real proxy: the limits hold for all workers together, what
// they refuse is answered 503 with x-proxy-overloaded (HTTP) or closed (tcp_proxy) and counted,
// the gauges show a breaker open, and a runtime override takes effect.

import assert from 'node:assert/strict';
import type * as http from 'node:http';
import * as net from 'node:net';
import { test, type TestContext } from 'node:test';
import { httpListener } from '../helpers/config_fixtures';
import { startUpstream, tcpUpstream, type Upstream } from '../helpers/http_peers';
import { request, type HttpResult, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
const OVERFLOW_BODY = 'upstream connect error or disconnect/reset before headers. reset reason: overflow';

/** An upstream that holds every response until `release()`, recording how many it held at once. */
interface HoldingUpstream {
  readonly upstream: Upstream;
  held(): number;
  maxConcurrent(): number;
  /** Answers every held response, and those that arrive later. */
  release(): void;
  /** Holds the responses that arrive from now on again. */
  hold(): void;
}

async function holdingUpstream(t: TestContext): Promise<HoldingUpstream> {
  const held: http.ServerResponse[] = [];
  let holding = true;
  let active = 0;
  let max = 0;
  const upstream = await startUpstream('u', (_req, res) => {
    active++;
    max = Math.max(max, active);
    res.on('finish', () => active--);
    if (holding) held.push(res);
    else res.end('ok');
  });
  const release = (): void => {
    holding = false;
    for (const res of held.splice(0)) res.end('ok');
  };
  t.after(async () => {
    release();
    await upstream.close();
  });
  return { upstream, held: () => held.length, maxConcurrent: () => max, release, hold: () => (holding = true) };
}

async function proxyFor(t: TestContext, upstreamPort: number, cluster: Record<string, unknown>, concurrency: number, extra: Record<string, unknown> = {}): Promise<RunningProxy> {
  const proxy = await startProxy(
    {
      static_resources: {
        listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }])],
        clusters: [
          {
            name: 'backend',
            type: 'STATIC',
            connect_timeout: '1s',
            load_assignment: { cluster_name: 'backend', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstreamPort } } } }] }] },
            ...cluster,
          },
        ],
      },
      ...extra,
    },
    ['--concurrency', String(concurrency)],
  );
  t.after(() => proxy.cleanup());
  return proxy;
}

/** One request on its own connection, so that both workers take some. */
function send(port: number): Promise<HttpResult> {
  return request(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } });
}

function assertOverflow(reply: HttpResult): void {
  assert.equal(reply.status, 503);
  assert.equal(reply.headers['x-proxy-overloaded'], 'true');
  assert.equal(reply.body, OVERFLOW_BODY);
}

test('max_requests holds for both workers together: exactly the overflow is refused', TIMEOUT, async (t) => {
  const upstream = await holdingUpstream(t);
  const cluster = { circuit_breakers: { thresholds: [{ max_requests: 10, track_remaining: true }] } };
  const proxy = await proxyFor(t, upstream.upstream.port, cluster, 2);
  const port = await proxy.listenerPort('in');
  const gauge = (name: string) => proxy.stat(`cluster.backend.circuit_breakers.default.${name}`);
  assert.deepEqual([await gauge('rq_open'), await gauge('remaining_rq'), await gauge('remaining_cx')], [0, 10, 1024]);

  // 50 at once, each on its own connection. With connections and pending requests at their
  // defaults (1024), every request waits for a connection of its own; the first 10 to get one
  // are sent, and each later one finds max_requests reached: 40 overflows, whatever the timing,
  // as long as nothing is answered before all 50 are in. So the upstream answers only then.
  let refused = 0;
  const replies = Array.from({ length: 50 }, () =>
    send(port).then((reply) => {
      if (reply.status === 503) refused++;
      return reply;
    }),
  );
  await waitFor('every request held or refused', () => (upstream.held() + refused === 50 ? true : undefined));
  assert.deepEqual([await gauge('rq_open'), await gauge('remaining_rq')], [1, 0]);
  upstream.release();
  const all = await Promise.all(replies);
  const ok = all.filter((r) => r.status === 200);
  const overflowed = all.filter((r) => r.status !== 200);
  assert.equal(ok.length, 10);
  assert.equal(overflowed.length, 40);
  for (const reply of overflowed) assertOverflow(reply);
  assert.equal(upstream.maxConcurrent(), 10);
  assert.equal(await proxy.stat('cluster.backend.upstream_rq_pending_overflow'), 40);
  assert.equal(await proxy.stat('cluster.backend.upstream_rq_503'), 40);
  await waitFor('the breaker closed', async () => ((await gauge('rq_open')) === 0 && (await gauge('remaining_rq')) === 10 ? true : undefined));
});

test('max_connections makes requests wait for a connection, max_pending_requests bounds the wait', TIMEOUT, async (t) => {
  const upstream = await holdingUpstream(t);
  const connections = new Set<net.Socket>();
  upstream.upstream.server.on('connection', (socket: net.Socket) => connections.add(socket));
  const cluster = { circuit_breakers: { thresholds: [{ max_connections: 1, max_pending_requests: 2 }] } };
  // One worker: a worker whose pool has no connection at all opens one whatever the limit (as
  // Envoy's thread-local pools do, lest requests queue where nothing will ever serve them).
  const proxy = await proxyFor(t, upstream.upstream.port, cluster, 1);
  const port = await proxy.listenerPort('in');

  const first = send(port);
  await waitFor('the first request upstream', () => (upstream.held() === 1 ? true : undefined));
  const waiting = [send(port), send(port)];
  await waitFor('two requests waiting', async () => ((await proxy.stat('cluster.backend.upstream_rq_pending_active')) === 2 ? true : undefined));
  assert.equal(await proxy.stat('cluster.backend.circuit_breakers.default.cx_open'), 1);
  assert.equal(await proxy.stat('cluster.backend.circuit_breakers.default.rq_pending_open'), 1);
  for (const reply of await Promise.all([send(port), send(port)])) assertOverflow(reply);
  assert.equal(await proxy.stat('cluster.backend.upstream_rq_pending_overflow'), 2);
  assert.ok((await proxy.stat('cluster.backend.upstream_cx_overflow'))! >= 1);

  upstream.release();
  for (const reply of await Promise.all([first, ...waiting])) assert.equal(reply.status, 200);
  // One connection served all three, one after another.
  assert.equal(connections.size, 1);
  assert.equal(upstream.maxConcurrent(), 1);
});

test('tcp_proxy: over max_connections the downstream connection is closed and counted', TIMEOUT, async (t) => {
  const upstreamPort = await tcpUpstream(t, (socket) => socket.pipe(socket));
  const proxy = await startProxy(
    {
      static_resources: {
        listeners: [
          {
            name: 'tcp',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            filter_chains: [
              {
                filters: [
                  {
                    name: 'proxy.filters.network.tcp_proxy',
                    typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 'tcp', cluster: 'echo' },
                  },
                ],
              },
            ],
          },
        ],
        clusters: [
          {
            name: 'echo',
            connect_timeout: '1s',
            load_assignment: { cluster_name: 'echo', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstreamPort } } } }] }] },
            circuit_breakers: { thresholds: [{ max_connections: 1 }] },
          },
        ],
      },
    },
    ['--concurrency', '2'],
  );
  t.after(() => proxy.cleanup());
  const port = await proxy.listenerPort('tcp');
  /** Connects, sends `text`, and resolves to what came back before the proxy closed (or `hold` ms passed). */
  const session = (text: string) => {
    const socket = net.connect(port, '127.0.0.1');
    t.after(() => socket.destroy());
    let received = '';
    socket.on('data', (d) => (received += d.toString()));
    socket.on('error', () => undefined);
    const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
    socket.write(text);
    return { socket, echoed: () => received, closed };
  };

  const a = session('a');
  await waitFor('the echo through the first connection', () => (a.echoed() === 'a' ? true : undefined));
  assert.equal(await session('b').closed, '');
  assert.equal(await proxy.stat('cluster.echo.upstream_cx_overflow'), 1);
  assert.equal(await proxy.stat('cluster.echo.circuit_breakers.default.cx_open'), 1);
  a.socket.destroy();
  await waitFor('the connection given back', async () => ((await proxy.stat('cluster.echo.circuit_breakers.default.cx_open')) === 0 ? true : undefined));
  const c = session('c');
  await waitFor('the echo through a new connection', () => (c.echoed() === 'c' ? true : undefined));
});

test('a runtime override of a threshold takes effect, and GET /clusters prints it', TIMEOUT, async (t) => {
  const upstream = await holdingUpstream(t);
  const proxy = await proxyFor(t, upstream.upstream.port, {}, 2, { layered_runtime: { layers: [{ name: 'admin', admin_layer: {} }] } });
  const port = await proxy.listenerPort('in');
  const limitLine = async () => (await proxy.admin('/clusters')).body.split('\n').find((l) => l.startsWith('backend::default_priority::max_requests::'));
  assert.equal(await limitLine(), 'backend::default_priority::max_requests::1024');

  assert.equal((await proxy.admin('/runtime_modify?circuit_breakers.backend.default.max_requests=1', 'POST')).status, 200);
  assert.equal(await limitLine(), 'backend::default_priority::max_requests::1');
  const json = JSON.parse((await proxy.admin('/clusters?format=json')).body) as { cluster_statuses: { circuit_breakers: { thresholds: { max_requests: number }[] } }[] };
  assert.equal(json.cluster_statuses[0]!.circuit_breakers.thresholds[0]!.max_requests, 1);
  // The workers take the runtime from the supervisor's next message. Until the worker serving the
  // second request has it, that request is admitted too: both are answered and the pair is tried again.
  const refused = await waitFor('a request over the new limit refused', async () => {
    upstream.hold();
    const first = send(port);
    await waitFor('the first request upstream', () => (upstream.held() === 1 ? true : undefined));
    const second = send(port);
    const outcome = await new Promise<HttpResult | null>((resolve) => {
      const admitted = setInterval(() => {
        if (upstream.held() < 2) return;
        clearInterval(admitted);
        resolve(null);
      }, 5);
      void second.then((reply) => {
        clearInterval(admitted);
        resolve(reply);
      });
    });
    upstream.release();
    assert.equal((await first).status, 200);
    if (outcome === null) {
      assert.equal((await second).status, 200);
      return undefined;
    }
    return outcome;
  });
  assertOverflow(refused);
});
