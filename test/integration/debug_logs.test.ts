import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { request, startUpstream, type Upstream } from '../helpers/http_peers';
import { makeTempDir, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { routedBootstrap } from '../helpers/routed_bootstrap';

interface Entry {
  readonly pid: number;
  readonly level: string;
  readonly component: string;
  /** The message, lines after the first included (header dumps). */
  readonly message: string;
}

/** The log's entries; an entry runs until the next line that starts one. */
function entries(logPath: string): Entry[] {
  const text = fs.existsSync(logPath) ? fs.readFileSync(logPath, 'utf8') : '';
  return [...text.matchAll(/^\[(\d+)\]\[(\w+)\]\[(\w+)\] ([\s\S]*?)(?=^\[\d+\]\[|(?![\s\S]))/gm)].map((m) => ({
    pid: Number(m[1]),
    level: m[2]!,
    component: m[3]!,
    message: m[4]!,
  }));
}

let upstream: Upstream;
let proxy: RunningProxy;
let logDir: string;
let logPath: string;

before(async () => {
  upstream = await startUpstream('backend');
  logDir = makeTempDir();
  logPath = path.join(logDir, 'proxy.log');
  const bootstrap = routedBootstrap(upstream.port);
  bootstrap.static_resources.clusters[0].health_checks = [{ timeout: '1s', interval: '1s', unhealthy_threshold: 1, healthy_threshold: 1, http_health_check: { path: '/healthz' } }];
  proxy = await startProxy(bootstrap, ['-l', 'debug', '--log-path', logPath, '--log-format', '[%P][%l][%n] %v']);
});

after(async () => {
  await proxy?.cleanup();
  await upstream?.close();
  fs.rmSync(logDir, { recursive: true, force: true });
});

test('one proxied request logs its connection, stream, route, pool and upstream lines at debug', { timeout: 30_000 }, async () => {
  const port = await proxy.listenerPort('http_in');
  assert.equal((await request(port, { path: '/debug-me' })).status, 200);

  const find = (all: Entry[], component: string, pattern: RegExp) => all.find((e) => e.component === component && e.level === 'debug' && pattern.test(e.message));
  const all = await waitFor('the response lines', () => {
    const logged = entries(logPath);
    return find(logged, 'pool', /^\[C\d+\] response complete/) ? logged : undefined;
  });
  const headers = find(all, 'http', /^\[C\d+\]\[S\d+\] request headers complete \(end_stream=true\):\n':authority', '[^']+'\n':path', '\/debug-me'\n':method', 'GET'\n/);
  assert.ok(headers, `request headers line in:\n${fs.readFileSync(logPath, 'utf8')}`);
  const [, c, s] = /^\[C(\d+)\]\[S(\d+)\]/.exec(headers.message)!;
  const stream = `[C${c}][S${s}] `;
  const worker = headers.pid;
  const line = (component: string, text: string) => {
    const entry = all.find((e) => e.component === component && e.message.startsWith(text));
    assert.ok(entry, `no ${component} line starting ${JSON.stringify(text)}`);
    assert.equal(entry.pid, worker, `${text} is logged by the worker that took the request`);
    return entry;
  };
  line('conn_handler', `[C${c}] new connection`);
  line('http', `[C${c}] new stream`);
  line('router', `${stream}cluster 'backend' match for URL '/debug-me'`);
  assert.match(line('router', `${stream}router decoding headers:\n`).message, /'x-forwarded-proto', 'http'\n/);

  // The upstream connection has an id of its own, on the pool, client and connection lines.
  const created = find(all, 'pool', /^\[C\d+\] creating a new connection\n$/);
  assert.ok(created, 'no pool line creating a connection');
  assert.equal(created.pid, worker);
  const [, u] = /^\[C(\d+)\]/.exec(created.message)!;
  assert.notEqual(u, c);
  // Envoy's order: the request queued, then a connection created for it.
  const queued = all.findIndex((e) => e.component === 'pool' && e.message === 'queueing request due to no available connections\n');
  assert.ok(queued >= 0 && queued < all.indexOf(created), 'the queueing line comes before the creating line');
  line('client', `[C${u}] connecting`);
  line('connection', `[C${u}] connecting to 127.0.0.1:${upstream.port}`);
  line('connection', `[C${u}] connected`);
  line('pool', `[C${u}] attaching to next request`);
  line('router', `${stream}pool ready`);
  line('router', `${stream}upstream headers complete: end_stream=false`);
  assert.match(line('http', `${stream}encoding headers via codec (end_stream=false):\n`).message, /^.*\n':status', '200'\n/);
  line('client', `[C${u}] response complete`);
  assert.deepEqual(all.filter((e) => e.level === 'trace'), [], 'no trace line at -l debug');
});

test('an admin request logs its request headers line, from the supervisor', { timeout: 30_000 }, async () => {
  assert.equal((await proxy.admin('/stats?filter=debug_marker')).status, 200);
  const entry = await waitFor('the admin request line', () =>
    entries(logPath).find((e) => e.component === 'http' && e.message.includes("':path', '/stats?filter=debug_marker'\n")),
  );
  assert.equal(entry.pid, proxy.pid);
  assert.match(entry.message, /^\[C\d+\]\[S\d+\] request headers complete \(end_stream=true\):\n':authority', '127\.0\.0\.1:\d+'\n/);
  const [, c] = /^\[C(\d+)\]/.exec(entry.message)!;
  assert.ok(entries(logPath).some((e) => e.pid === proxy.pid && e.component === 'conn_handler' && e.message.startsWith(`[C${c}] new connection`)));
});

test('a health check logs its outcome, from the supervisor', { timeout: 30_000 }, async () => {
  const entry = await waitFor('the health check line', () => entries(logPath).find((e) => e.component === 'hc'));
  assert.equal(entry.pid, proxy.pid);
  assert.equal(entry.message, `hc success for 127.0.0.1:${upstream.port} in cluster 'backend': health_flags=healthy\n`);
});

test('an HTTP/2 stream logs its codec, headers and response lines with its ids', { timeout: 30_000 }, async () => {
  const port = await proxy.listenerPort('http_in');
  const session = http2.connect(`http://127.0.0.1:${port}`);
  try {
    const status = await new Promise<number>((resolve, reject) => {
      const stream = session.request({ ':path': '/h2-debug' });
      stream.on('response', (headers) => resolve(Number(headers[':status'])));
      stream.on('error', reject);
      stream.resume();
    });
    assert.equal(status, 200);
  } finally {
    session.close();
  }
  const headers = await waitFor('the HTTP/2 request headers line', () => entries(logPath).find((e) => e.component === 'http' && e.message.includes("':path', '/h2-debug'\n")));
  const [, c, s] = /^\[C(\d+)\]\[S(\d+)\] request headers complete \(end_stream=true\):\n/.exec(headers.message)!;
  const encoded = `[C${c}][S${s}] encoding headers via codec (end_stream=false):\n':status', '200'\n`;
  const all = await waitFor('the HTTP/2 response line', () => {
    const logged = entries(logPath);
    return logged.some((e) => e.component === 'http' && e.message.startsWith(encoded)) ? logged : undefined;
  });
  assert.ok(all.some((e) => e.component === 'http' && e.message === `[C${c}] codec: http2\n`));
  assert.ok(all.some((e) => e.component === 'router' && e.message.startsWith(`[C${c}][S${s}] cluster 'backend' match for URL '/h2-debug'`)));
});

test('an HTTP/2 codec error logs a local close: closing socket: 1, no remote close', { timeout: 30_000 }, async () => {
  const port = await proxy.listenerPort('http_in');
  const h2Connections = () => new Set(entries(logPath).flatMap((e) => (e.component === 'http' ? (/^\[C(\d+)\] codec: http2\n$/.exec(e.message)?.[1] ?? []) : [])));
  const known = h2Connections();
  // The preface, an empty SETTINGS frame, then HEADERS on stream 0: a connection error (RFC 9113 section 6.2).
  const wire = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1, 1, 5, 0, 0, 0, 0, 0x82])]);
  const socket = net.connect(port, '127.0.0.1', () => socket.write(wire));
  socket.resume();
  await new Promise((resolve) => socket.on('close', resolve).on('error', () => {}));
  const c = await waitFor('the connection\'s codec line', () => [...h2Connections()].find((id) => !known.has(id)));
  const closing = await waitFor('the closing socket line', () => entries(logPath).find((e) => e.component === 'connection' && e.message.startsWith(`[C${c}] closing socket:`)));
  assert.equal(closing.message, `[C${c}] closing socket: 1\n`);
  assert.ok(!entries(logPath).some((e) => e.message === `[C${c}] remote close\n`), 'a codec error is no remote close');
});
