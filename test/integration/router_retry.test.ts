import assert from 'node:assert/strict';
import * as net from 'node:net';
import { test, type TestContext } from 'node:test';
import type { ClusterConfig, HttpConnectionManagerConfig, RetryPolicy } from '../../src/config/model';
import { circuitBreakersConfig } from '../../src/config/model_builder';
import { parseRetryOn } from '../../src/filters/http/retry_on';
import { clusterRoute, httpConnectionManager, listener, startDataPlane, staticCluster, virtualHost, type DataPlane } from '../helpers/data_plane';
import { request, startUpstream, tcpUpstream, type Handler, type Upstream } from '../helpers/http_peers';
import { refusedPort } from '../helpers/refused_port';

const TIMEOUT = { timeout: 20000 };

function policy(retryOn: string, extra: Partial<RetryPolicy> = {}): RetryPolicy {
  return {
    retryOn: parseRetryOn(retryOn).flags,
    numRetries: 1,
    perTryTimeoutMs: 0,
    retriableStatusCodes: [],
    avoidPreviousHosts: false,
    hostSelectionRetryMaxAttempts: 0,
    baseIntervalMs: 1,
    maxIntervalMs: 10,
    ...extra,
  };
}

async function upstream(t: TestContext, name: string, handler?: Handler): Promise<Upstream> {
  const u = await startUpstream(name, handler);
  t.after(() => u.close());
  return u;
}

/** A proxy whose only route sends everything to cluster `backend` at `ports`. */
async function proxy(
  t: TestContext,
  ports: number[],
  options: { retryPolicy?: RetryPolicy; timeoutMs?: number; hcm?: Partial<HttpConnectionManagerConfig>; cluster?: Partial<ClusterConfig>; random?: () => number } = {},
): Promise<{ dp: DataPlane; port: number }> {
  const extra = { timeoutMs: options.timeoutMs ?? 15000, ...(options.retryPolicy === undefined ? {} : { retryPolicy: options.retryPolicy }) };
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'backend', extra)])];
  const dp = await startDataPlane(
    [listener('http', httpConnectionManager(routes, options.hcm))],
    [staticCluster('backend', ports.map((port) => ({ port })), options.cluster)],
    options.random === undefined ? {} : { random: options.random },
  );
  t.after(() => dp.close());
  return { dp, port: dp.port('http') };
}

/** Answers 503 to the first `failures` requests, then describes the request as startUpstream does. */
function flaky(failures: number): Handler {
  let seen = 0;
  return (req, res, body) => {
    if (seen++ < failures) {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end(`failure ${seen}`);
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ body: body.toString(), headers: req.headers }));
  };
}

/** RANDOM picks host `values[i] % n` in turn: the first request's first pick, its retry's picks, ... */
function picks(...values: number[]): () => number {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)];
}

test('a 5xx upstream is retried until it answers; the request body goes again with each try', TIMEOUT, async (t) => {
  const backend = await upstream(t, 'flaky', flaky(2));
  const { dp, port } = await proxy(t, [backend.port], { retryPolicy: policy('5xx', { numRetries: 3 }) });
  const reply = await request(port, { method: 'POST', path: '/orders', body: 'the order body', headers: { 'content-type': 'text/plain' } });
  assert.equal(reply.status, 200);
  assert.equal(JSON.parse(reply.body).body, 'the order body');
  assert.equal(backend.seen.length, 3);
  for (const seen of backend.seen) assert.equal(seen.bodyBytes, 'the order body'.length);
  assert.equal(dp.stat('cluster.backend.upstream_rq_retry'), 2);
  assert.equal(dp.stat('cluster.backend.upstream_rq_retry_success'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_200'), 1);
  // The retried 503s did not go downstream: they are not the cluster's responses.
  assert.equal(dp.stat('cluster.backend.upstream_rq_503'), 0);

  // A chunked body is kept and sent again too.
  const chunkedBackend = await upstream(t, 'flaky-chunked', flaky(1));
  const chunked = await proxy(t, [chunkedBackend.port], { retryPolicy: policy('5xx') });
  const body = Buffer.alloc(200_000, 'a');
  const chunkedReply = await request(chunked.port, { method: 'POST', body, headers: { 'transfer-encoding': 'chunked' } });
  assert.equal(chunkedReply.status, 200);
  assert.deepEqual(chunkedBackend.seen.map((s) => s.bodyBytes), [body.length, body.length]);
});

test('num_retries exhausted: the last retriable response goes downstream as it is', TIMEOUT, async (t) => {
  const backend = await upstream(t, 'down', flaky(100));
  const { dp, port } = await proxy(t, [backend.port], { retryPolicy: policy('gateway-error', { numRetries: 2 }) });
  const reply = await request(port);
  assert.equal(reply.status, 503);
  assert.equal(reply.body, 'failure 3');
  assert.equal(backend.seen.length, 3);
  assert.equal(dp.stat('cluster.backend.upstream_rq_retry'), 2);
  assert.equal(dp.stat('cluster.backend.upstream_rq_retry_limit_exceeded'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_retry_success'), 0);
  assert.equal(dp.stat('cluster.backend.upstream_rq_503'), 1);

  // A status retry_on does not name is not retried.
  const other = await upstream(t, 'teapot', (_req, res) => {
    res.writeHead(500);
    res.end();
  });
  const gateway = await proxy(t, [other.port], { retryPolicy: policy('gateway-error', { numRetries: 2 }) });
  assert.equal((await request(gateway.port)).status, 500);
  assert.equal(other.seen.length, 1);
});

test('circuit breakers: max_retries 0 refuses the retry (upstream_rq_retry_overflow); a retry budget admits its minimum', TIMEOUT, async (t) => {
  const backend = await upstream(t, 'down', flaky(1));
  const noRetries = { circuitBreakers: circuitBreakersConfig({ thresholds: [{ max_retries: 0 }] }) };
  const { dp, port } = await proxy(t, [backend.port], { retryPolicy: policy('5xx', { numRetries: 3 }), cluster: noRetries });
  const reply = await request(port);
  assert.equal(reply.status, 503);
  assert.equal(backend.seen.length, 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_retry_overflow'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_retry'), 0);

  // A budget replaces max_retries: min_retry_concurrency 1 admits the one retry this request needs.
  const recovering = await upstream(t, 'recovering', flaky(1));
  const budget = { circuitBreakers: circuitBreakersConfig({ thresholds: [{ max_retries: 0, retry_budget: { budget_percent: { value: 0 }, min_retry_concurrency: 1 } }] }) };
  const budgeted = await proxy(t, [recovering.port], { retryPolicy: policy('5xx', { numRetries: 3 }), cluster: budget });
  assert.equal((await request(budgeted.port)).status, 200);
  assert.equal(budgeted.dp.stat('cluster.backend.upstream_rq_retry_success'), 1);
  assert.equal(budgeted.dp.stat('cluster.backend.upstream_rq_retry_overflow'), 0);
});

test('a connection reset before the response is retried under reset', TIMEOUT, async (t) => {
  const backend = await upstream(t, 'good');
  let connections = 0;
  // The first connection is dropped once the request arrives; later ones are piped to the good upstream.
  const port = await tcpUpstream(t, (socket) => {
    if (connections++ === 0) {
      socket.once('data', () => socket.destroy());
      return;
    }
    const forward = net.connect(backend.port, '127.0.0.1');
    forward.on('error', () => socket.destroy());
    socket.pipe(forward).pipe(socket);
  });
  const proxied = await proxy(t, [port], { retryPolicy: policy('reset') });
  const reply = await request(proxied.port);
  assert.equal(reply.status, 200);
  assert.equal(proxied.dp.stat('cluster.backend.upstream_rq_retry'), 1);
  assert.equal(proxied.dp.stat('cluster.backend.upstream_rq_retry_success'), 1);

  // Without a retry policy the reset is the client's 503.
  connections = 0;
  const plain = await proxy(t, [port]);
  assert.equal((await request(plain.port)).status, 503);
});

test('connect-failure: previous_hosts sends the retry to the other host', TIMEOUT, async (t) => {
  const good = await upstream(t, 'good');
  const dead = await refusedPort();
  // RANDOM picks the dead host first, and again for the retry unless the predicate refuses it.
  const random = () => picks(0, 0, 1);
  const avoiding = await proxy(t, [dead, good.port], {
    retryPolicy: policy('connect-failure', { avoidPreviousHosts: true, hostSelectionRetryMaxAttempts: 3 }),
    cluster: { lbPolicy: 'RANDOM' },
    random: random(),
  });
  const reply = await request(avoiding.port);
  assert.equal(reply.status, 200);
  assert.equal(JSON.parse(reply.body).upstream, 'good');
  assert.equal(avoiding.dp.stat('cluster.backend.upstream_rq_retry'), 1);
  assert.equal(avoiding.dp.hostStat('backend', `127.0.0.1:${dead}`, 'cx_connect_fail'), 1);

  // The same picks without the predicate: the retry fails on the dead host again.
  const blind = await proxy(t, [dead, good.port], { retryPolicy: policy('connect-failure'), cluster: { lbPolicy: 'RANDOM' }, random: random() });
  const failed = await request(blind.port);
  assert.equal(failed.status, 503);
  assert.match(failed.body, /connection failure/);
  assert.equal(blind.dp.stat('cluster.backend.upstream_rq_retry'), 1);
  assert.equal(blind.dp.stat('cluster.backend.upstream_rq_retry_limit_exceeded'), 1);
});

test('per_try_timeout: a hung try is cut, counted and retried on another host; 504 when it may not retry', TIMEOUT, async (t) => {
  const hung = await upstream(t, 'hung', () => undefined);
  const fast = await upstream(t, 'fast');
  const retried = await proxy(t, [hung.port, fast.port], {
    retryPolicy: policy('5xx', { perTryTimeoutMs: 150, avoidPreviousHosts: true, hostSelectionRetryMaxAttempts: 3 }),
    cluster: { lbPolicy: 'RANDOM' },
    random: picks(0, 0, 1),
  });
  const reply = await request(retried.port);
  assert.equal(reply.status, 200);
  assert.equal(JSON.parse(reply.body).upstream, 'fast');
  // Each try is told its own timeout.
  assert.equal(fast.seen[0].headers['x-proxy-expected-rq-timeout-ms'], '150');
  assert.equal(retried.dp.stat('cluster.backend.upstream_rq_per_try_timeout'), 1);
  assert.equal(retried.dp.stat('cluster.backend.upstream_rq_retry'), 1);
  assert.equal(retried.dp.stat('cluster.backend.upstream_rq_timeout'), 0);
  assert.equal(retried.dp.hostStat('backend', `127.0.0.1:${hung.port}`, 'rq_timeout'), 1);

  // connect-failure does not retry a timed out try.
  const alone = await proxy(t, [hung.port], { retryPolicy: policy('connect-failure', { perTryTimeoutMs: 100 }) });
  const timedOut = await request(alone.port);
  assert.equal(timedOut.status, 504);
  assert.equal(timedOut.body, 'upstream request timeout');
  assert.equal(alone.dp.stat('cluster.backend.upstream_rq_per_try_timeout'), 1);
  assert.equal(alone.dp.stat('cluster.backend.upstream_rq_retry'), 0);

  // The route timeout bounds the whole request, retries included.
  const bounded = await proxy(t, [hung.port], { retryPolicy: policy('5xx', { perTryTimeoutMs: 100, numRetries: 100 }), timeoutMs: 350 });
  const started = performance.now();
  const whole = await request(bounded.port);
  assert.equal(whole.status, 504);
  assert.ok(performance.now() - started < 5000);
  assert.equal(bounded.dp.stat('cluster.backend.upstream_rq_timeout'), 1);
  assert.ok(bounded.dp.stat('cluster.backend.upstream_rq_per_try_timeout') >= 1);
});

test('x-proxy-* retry and timeout headers: honored from an internal downstream, never forwarded', TIMEOUT, async (t) => {
  const backend = await upstream(t, 'flaky', flaky(1));
  // use_remote_address: a loopback peer without x-forwarded-for is internal.
  const trusted = await proxy(t, [backend.port], { hcm: { useRemoteAddress: true } });
  const reply = await request(trusted.port, { headers: { 'x-proxy-retry-on': '5xx', 'x-proxy-max-retries': '1', 'x-proxy-upstream-rq-per-try-timeout-ms': '1000', 'x-proxy-upstream-rq-timeout-ms': '3000' } });
  assert.equal(reply.status, 200);
  const forwarded = JSON.parse(reply.body).headers;
  for (const name of ['x-proxy-retry-on', 'x-proxy-max-retries', 'x-proxy-upstream-rq-per-try-timeout-ms', 'x-proxy-upstream-rq-timeout-ms']) {
    assert.equal(forwarded[name], undefined, name);
  }
  assert.equal(forwarded['x-proxy-expected-rq-timeout-ms'], '1000');
  assert.equal(trusted.dp.stat('cluster.backend.upstream_rq_retry'), 1);

  // The route timeout from the header.
  const hung = await upstream(t, 'hung', () => undefined);
  const timed = await proxy(t, [hung.port], { hcm: { useRemoteAddress: true } });
  const timedOut = await request(timed.port, { headers: { 'x-proxy-upstream-rq-timeout-ms': '100' } });
  assert.equal(timedOut.status, 504);
  assert.equal(hung.seen[0].headers['x-proxy-expected-rq-timeout-ms'], '100');

  // With x-forwarded-for from the client the request is not internal: the headers are dropped.
  const external = await upstream(t, 'external', flaky(1));
  const untrusted = await proxy(t, [external.port], { hcm: { useRemoteAddress: true } });
  const refused = await request(untrusted.port, { headers: { 'x-forwarded-for': '203.0.113.7', 'x-proxy-retry-on': '5xx', 'x-proxy-upstream-rq-timeout-ms': '1' } });
  assert.equal(refused.status, 503);
  assert.equal(external.seen.length, 1);
  assert.equal(external.seen[0].headers['x-proxy-retry-on'], undefined);
  assert.equal(external.seen[0].headers['x-proxy-upstream-rq-timeout-ms'], undefined);
  assert.equal(external.seen[0].headers['x-proxy-expected-rq-timeout-ms'], '15000');
  assert.equal(untrusted.dp.stat('cluster.backend.upstream_rq_retry'), 0);
});

test('timeouts beyond a Node timer\'s range (30 days) wait: route, stream idle, connect, and the header\'s', TIMEOUT, async (t) => {
  // Node fires a setTimeout over 2^31 - 1 ms after 1 ms: each of these would cut the request.
  const month = 30 * 24 * 3600 * 1000;
  const slow = await upstream(t, 'slow', (_req, res) => setTimeout(() => res.end('late'), 200));
  const { port } = await proxy(t, [slow.port], { timeoutMs: month, hcm: { streamIdleTimeoutMs: month, useRemoteAddress: true }, cluster: { connectTimeoutMs: month } });
  const reply = await request(port);
  assert.equal(reply.status, 200);
  assert.equal(reply.body, 'late');
  const fromHeader = await request(port, { headers: { 'x-proxy-upstream-rq-timeout-ms': String(month) } });
  assert.equal(fromHeader.status, 200);
});

test('a body over the connection buffer limit abandons the retries', TIMEOUT, async (t) => {
  const backend = await upstream(t, 'flaky', flaky(1));
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'backend', { retryPolicy: policy('5xx') })])];
  const dp = await startDataPlane([listener('http', httpConnectionManager(routes), { perConnectionBufferLimitBytes: 16 * 1024 })], [staticCluster('backend', [{ port: backend.port }])]);
  t.after(() => dp.close());
  const reply = await request(dp.port('http'), { method: 'POST', body: Buffer.alloc(64 * 1024, 'b') });
  assert.equal(reply.status, 503);
  assert.equal(backend.seen.length, 1);
  assert.equal(dp.stat('cluster.backend.retry_or_shadow_abandoned'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_retry'), 0);
});
