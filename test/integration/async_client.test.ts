// The worker's async HTTP client against real upstream servers on 127.0.0.1, HTTP/1.1 and h2c:
// a complete request out (marked internal, our address in x-forwarded-for), the whole response
// back with its trailers; the router's local replies where no response can come (no host, a
// failed connection, the timeout); a failure for a reset once the response has begun or a body
// too big to keep; cancel() stopping everything. The cluster counts each as the router would.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import type * as net from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { SystemClock } from '../../src/common/clock';
import type { ClusterConfig } from '../../src/config/model';
import { http2ProtocolOptionsOf } from '../../src/config/model_builder';
import { RequestHead } from '../../src/http/message';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore, type SharedStatsStore } from '../../src/stats/store';
import { AsyncClient, type AsyncRequest, type AsyncResponse } from '../../src/upstream/worker/async_client';
import { Cluster } from '../../src/upstream/worker/cluster';
import { silentConnectionLogs, silentLogger, staticCluster } from '../helpers/data_plane';
import { closeServer, listen } from '../helpers/http_peers';
import { refusedPort } from '../helpers/refused_port';
import { staticSnapshots } from '../helpers/membership';
import { waitFor } from '../helpers/proxy_process';
import { SecretStore } from '../../src/tls/secret_store';

const TIMEOUT = { timeout: 30_000 };
const clock = new SystemClock();
const client = new AsyncClient({ clock, localAddress: '10.0.0.1' });

/** A cluster of the upstreams at `ports` (none: no host), closed after the test. */
function clusterOf(t: TestContext, ports: readonly number[], overrides: Partial<ClusterConfig> = {}): { cluster: Cluster; store: SharedStatsStore } {
  const store = createHeapStatsStore();
  const config = staticCluster('c', ports.map((port) => ({ port })), overrides);
  const environment = {
    store,
    runtime: new LiveRuntime([]),
    random: () => 0,
    readBuffer: Buffer.alloc(65536),
    localLocality: null,
    log: silentLogger,
    connectionLogs: silentConnectionLogs, secrets: new SecretStore([]),
    reportsTables: true,
    onConsecutiveFailure: () => undefined,
    onHostsPicked: () => undefined,
    clock,
  };
  const cluster = new Cluster(config, staticSnapshots([config], store.hosts)[0]!, environment);
  t.after(() => cluster.close());
  return { cluster, store };
}

/** An upstream (HTTP/1.1, or h2c with `h2`) whose requests `handler` answers, closed after the test. */
async function upstream(t: TestContext, h2: boolean, handler: (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse, body: Buffer) => void): Promise<number> {
  const serve = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, res, Buffer.concat(chunks)));
  };
  const server = h2 ? http2.createServer(serve) : http.createServer(serve);
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const port = await listen(server);
  t.after(async () => {
    for (const socket of sockets) socket.destroy();
    await closeServer(server);
  });
  return port;
}

function post(body: string): RequestHead {
  const head = new RequestHead('POST', '/collect', false);
  head.authority = 'collector.example';
  head.contentLength = head.bodyLength = Buffer.byteLength(body);
  head.headers.push('content-type', 'text/plain', 'x-forwarded-for', '192.0.2.1');
  return head;
}

/** Sends `body`; resolves with the response or the failure, and send()'s own return. */
function send(cluster: Cluster, body: string, options: { timeoutMs?: number; keepResponseBody?: boolean } = {}): { outcome: Promise<AsyncResponse | 'reset'>; request: AsyncRequest | null } {
  let settle: (outcome: AsyncResponse | 'reset') => void = () => undefined;
  const outcome = new Promise<AsyncResponse | 'reset'>((resolve) => (settle = resolve));
  const request = client.send(cluster, post(body), body === '' ? [] : [Buffer.from(body)], null, { onSuccess: settle, onFailure: settle }, {
    timeoutMs: options.timeoutMs ?? 5000,
    keepResponseBody: options.keepResponseBody ?? true,
  });
  return { outcome, request };
}

const stat = (store: SharedStatsStore, name: string): number => store.snapshot().get(`cluster.c.${name}`) ?? 0;

describe('the async client', TIMEOUT, () => {
  for (const [protocol, h2] of [['HTTP/1.1', false], ['h2c', true]] as const) {
    const options = h2 ? { http2ProtocolOptions: http2ProtocolOptionsOf({}) } : {};

    test(`${protocol}: the whole request goes out marked internal; the whole response, trailers included, comes back`, async (t) => {
      const seen: { headers: http.IncomingHttpHeaders; body: string }[] = [];
      const port = await upstream(t, h2, (req, res, body) => {
        seen.push({ headers: req.headers, body: body.toString() });
        res.setHeader('content-type', 'text/plain');
        if (h2) (res as http2.Http2ServerResponse).addTrailers({ 'grpc-status': '0' });
        res.end(`got ${body.length}`);
      });
      const { cluster, store } = clusterOf(t, [port], options);
      const { outcome } = send(cluster, 'spans!');
      const response = (await outcome) as AsyncResponse;
      assert.equal(response.head.status, 200);
      assert.equal(response.body.toString(), 'got 6');
      if (h2) assert.deepEqual(response.trailers, ['grpc-status', '0']);
      assert.equal(seen[0]!.body, 'spans!');
      assert.equal(seen[0]!.headers['x-proxy-internal'], 'true');
      assert.equal(seen[0]!.headers['x-forwarded-for'], '192.0.2.1, 10.0.0.1');
      assert.equal(seen[0]!.headers[h2 ? ':authority' : 'host'], 'collector.example');
      assert.equal(stat(store, 'upstream_rq_200'), 1);
    });

    test(`${protocol}: a reset after the response began is a failure; a body over the buffer limit too, unless it is dropped`, async (t) => {
      const port = await upstream(t, h2, (req, res) => {
        if (req.url === '/collect' && req.headers['content-length'] === '5') {
          res.writeHead(200);
          (res as http.ServerResponse).write('partial');
          setTimeout(() => (h2 ? (res as http2.Http2ServerResponse).stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR) : res.socket!.destroy()), 50);
          return;
        }
        res.end('x'.repeat(4096));
      });
      const { cluster } = clusterOf(t, [port], { ...options, perConnectionBufferLimitBytes: 1024 });
      assert.equal(await send(cluster, 'reset').outcome, 'reset');
      assert.equal(await send(cluster, 'big').outcome, 'reset');
      const dropped = (await send(cluster, 'big', { keepResponseBody: false }).outcome) as AsyncResponse;
      assert.equal(dropped.head.status, 200);
      assert.equal(dropped.body.length, 0);
    });
  }

  test('no host: the router`s 503 comes back before send returns', (t) => {
    const { cluster, store } = clusterOf(t, []);
    let response: AsyncResponse | null = null;
    const request = client.send(cluster, post(''), [], null, { onSuccess: (r) => (response = r), onFailure: () => assert.fail('no failure') }, { timeoutMs: 0, keepResponseBody: true });
    assert.equal(request, null);
    assert.equal(response!.head.status, 503);
    assert.equal(response!.body.toString(), 'no healthy upstream');
    assert.equal(stat(store, 'upstream_cx_none_healthy'), 1);
    assert.equal(stat(store, 'upstream_rq_503'), 1);
  });

  test('a connection refused: 503 naming the reset reason', async (t) => {
    const port = await refusedPort();
    const { cluster, store } = clusterOf(t, [port]);
    const response = (await send(cluster, 'x').outcome) as AsyncResponse;
    assert.equal(response.head.status, 503);
    assert.equal(response.body.toString(), 'upstream connect error or disconnect/reset before headers. reset reason: connection failure');
    assert.equal(stat(store, 'upstream_rq_503'), 1);
  });

  test('no answer within the timeout: 504, counted as a timeout', async (t) => {
    const port = await upstream(t, false, () => undefined);
    const { cluster, store } = clusterOf(t, [port]);
    const response = (await send(cluster, 'x', { timeoutMs: 100 }).outcome) as AsyncResponse;
    assert.equal(response.head.status, 504);
    assert.equal(response.body.toString(), 'upstream request timeout');
    assert.equal(stat(store, 'upstream_rq_timeout'), 1);
    assert.equal(stat(store, 'upstream_rq_504'), 1);
  });

  test('cancel(): the upstream stream is reset and no callback follows', async (t) => {
    let aborted = false;
    const port = await upstream(t, false, (req) => req.socket.on('close', () => (aborted = true)));
    const { cluster } = clusterOf(t, [port]);
    let called = false;
    const request = client.send(cluster, post('x'), [Buffer.from('x')], null, { onSuccess: () => (called = true), onFailure: () => (called = true) }, { timeoutMs: 100, keepResponseBody: true });
    assert.notEqual(request, null);
    await waitFor('the request upstream', () => (cluster.info.stats.counters.upstream_rq_total.value() > 0 ? true : undefined));
    request!.cancel();
    await waitFor('the upstream connection closed', () => (aborted ? true : undefined));
    // Past the timeout the request would have had.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(called, false);
  });
});
