// Slow and abusive peers against the real binary: clients that send their head or body a byte at
// a time (request_headers_timeout, request_timeout, stream_idle_timeout, max_connection_duration
// close them, counted), a client that never reads a large response (flow control holds the
// proxy's buffer to its limit), 10,000 idle keep-alive connections, and an upstream that
// trickles its body. Each case checks that another client is served meanwhile.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { request, RunningProxy, sleep, startProxy, waitFor } from '../helpers/proxy_process';

const BIG_BYTES = 16 * 1024 * 1024;
const TRICKLE_CHUNKS = 20;

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
}

/** The upstream: `/` answers once the request is whole, `/big` 16 MiB, `/trickle` 20 bytes one every 50 ms. */
function upstreamServer(): http.Server {
  return http.createServer((req, res) => {
    req.resume();
    if (req.url === '/big') {
      res.writeHead(200, { 'content-length': BIG_BYTES });
      const chunk = Buffer.alloc(64 * 1024, 'b');
      let sent = 0;
      const pump = (): void => {
        while (sent < BIG_BYTES) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
      return;
    }
    if (req.url?.startsWith('/trickle') === true) {
      res.writeHead(200, { 'content-length': TRICKLE_CHUNKS });
      let sent = 0;
      const timer = setInterval(() => {
        res.write('t');
        if (++sent === TRICKLE_CHUNKS) {
          clearInterval(timer);
          res.end();
        }
      }, 50);
      res.on('close', () => clearInterval(timer));
      return;
    }
    req.on('end', () => res.end('ok'));
  });
}

/** Every listener's routes: the whole exchange on /trickle-cut must end within 300 ms, so a trickle of 1 s is cut. */
const ROUTES = [
  { match: { prefix: '/trickle-cut' }, route: { cluster: 'web', timeout: '0.3s' } },
  { match: { prefix: '/' }, route: { cluster: 'web', timeout: '5s' } },
];

/** Listener `name` (also its stat prefix) with `extra` in its connection manager's config. */
function slowPeerListener(name: string, extra: Record<string, unknown>) {
  return httpListener(name, 0, ROUTES, { stat_prefix: name, ...extra });
}

/** What a raw connection received until the proxy closed it (or `ms` passed), and whether it closed. */
interface RawOutcome {
  readonly text: string;
  readonly closed: boolean;
  readonly elapsedMs: number;
}

/**
 * Connects, writes `first`, then `drip` every `everyMs` until the connection closes or `ms` pass.
 * The proxy's answer and close are what the test reads.
 */
function slowClient(port: number, first: string, drip: string, everyMs: number, ms: number): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let timer: NodeJS.Timeout | null = null;
    const finish = (closed: boolean): void => {
      if (timer !== null) clearInterval(timer);
      clearTimeout(bound);
      socket.destroy();
      resolve({ text, closed, elapsedMs: Date.now() - started });
    };
    const bound = setTimeout(() => finish(false), ms);
    socket.on('connect', () => {
      socket.write(first);
      timer = setInterval(() => socket.writable && socket.write(drip), everyMs);
    });
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => finish(true));
  });
}

describe('slow and abusive peers', { timeout: 120_000 }, () => {
  let upstream: http.Server;
  let proxy: RunningProxy;
  const ports: Record<string, number> = {};

  before(async () => {
    upstream = upstreamServer();
    const up = await listen(upstream);
    proxy = await startProxy({
      static_resources: {
        listeners: [
          slowPeerListener('headers', { request_headers_timeout: '0.3s' }),
          slowPeerListener('request', { request_timeout: '0.4s' }),
          slowPeerListener('idle', { stream_idle_timeout: '0.3s' }),
          slowPeerListener('duration', { common_http_protocol_options: { max_connection_duration: '0.4s' } }),
          slowPeerListener('plain', {}),
        ],
        clusters: [
          // Flow control: the proxy holds at most about this much of a response a client does not read.
          { ...localCluster('web', up), per_connection_buffer_limit_bytes: 1024 * 1024 },
        ],
      },
    });
    for (const name of ['headers', 'request', 'idle', 'duration', 'plain']) ports[name] = await proxy.listenerPort(name);
  });

  after(async () => {
    await proxy?.cleanup();
    upstream?.close();
    upstream?.closeAllConnections();
  });

  test('request_headers_timeout: a head sent a line at a time gets 408 and the connection closes; an idle keep-alive connection does not', async () => {
    const slow = slowClient(ports.headers!, 'GET / HTTP/1.1\r\nhost: a\r\n', 'x-slow: 1\r\n', 50, 5_000);
    // Served meanwhile, on a connection of its own.
    assert.equal((await request(`http://127.0.0.1:${ports.headers}/`)).body, 'ok');
    const outcome = await slow;
    assert.ok(outcome.closed, 'the proxy closed the connection');
    assert.match(outcome.text, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    assert.match(outcome.text, /\r\n\r\nrequest header timeout$/);
    assert.ok(outcome.elapsedMs >= 250 && outcome.elapsedMs < 3_000, `closed after ${outcome.elapsedMs} ms`);
    assert.equal(await proxy.stat('http.headers.downstream_rq_header_timeout'), 1);
    // The timer runs from a request's first byte: a connection idle between requests keeps going.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      assert.equal((await request(`http://127.0.0.1:${ports.headers}/`, { agent })).status, 200);
      await sleep(600);
      assert.equal((await request(`http://127.0.0.1:${ports.headers}/`, { agent })).status, 200);
    } finally {
      agent.destroy();
    }
    assert.equal(await proxy.stat('http.headers.downstream_rq_header_timeout'), 1);
  });

  test('request_timeout: a body sent a byte at a time gets 408 "request timeout"', async () => {
    const slow = slowClient(ports.request!, 'POST / HTTP/1.1\r\nhost: a\r\ncontent-length: 1000\r\n\r\n', 'x', 50, 5_000);
    assert.equal((await request(`http://127.0.0.1:${ports.request}/`)).body, 'ok');
    const outcome = await slow;
    assert.ok(outcome.closed);
    assert.match(outcome.text, /^HTTP\/1\.1 408 Request Timeout\r\n[^]*\r\n\r\nrequest timeout$/);
    assert.equal(await proxy.stat('http.request.downstream_rq_timeout'), 1);
  });

  test('stream_idle_timeout: a body that stops gets 408 "stream timeout"', async () => {
    const slow = slowClient(ports.idle!, 'POST / HTTP/1.1\r\nhost: a\r\ncontent-length: 1000\r\n\r\nsome', '', 60_000, 5_000);
    assert.equal((await request(`http://127.0.0.1:${ports.idle}/`)).body, 'ok');
    const outcome = await slow;
    assert.ok(outcome.closed);
    assert.match(outcome.text, /^HTTP\/1\.1 408 Request Timeout\r\n[^]*\r\n\r\nstream timeout$/);
    assert.equal(await proxy.stat('http.idle.downstream_rq_idle_timeout'), 1);
  });

  test('max_connection_duration: a head that never ends does not keep its connection', async () => {
    const outcome = await slowClient(ports.duration!, 'GET / HTTP/1.1\r\nhost: a\r\n', 'x-slow: 1\r\n', 50, 5_000);
    assert.ok(outcome.closed, 'the proxy closed the connection');
    assert.equal(outcome.text, '');
    assert.ok(outcome.elapsedMs >= 350 && outcome.elapsedMs < 3_000, `closed after ${outcome.elapsedMs} ms`);
    assert.equal(await proxy.stat('http.duration.downstream_cx_max_duration_reached'), 1);
  });

  test('a client that never reads a 16 MiB response: the proxy stops reading the upstream and holds about its buffer limit', async () => {
    const socket = net.connect(ports.plain!, '127.0.0.1');
    try {
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      // The client takes the first bytes of the response and no more.
      socket.once('data', () => socket.pause());
      socket.write('GET /big HTTP/1.1\r\nhost: a\r\n\r\n');
      await waitFor('the upstream read paused', async () => ((await proxy.stat('cluster.web.upstream_flow_control_paused_reading_total')) ?? 0) >= 1 || undefined);
      await sleep(300);
      const buffered = (await proxy.stat('http.plain.downstream_cx_tx_bytes_buffered')) ?? 0;
      const sent = (await proxy.stat('http.plain.downstream_cx_tx_bytes_total')) ?? 0;
      // Above the downstream's limit reading the upstream stops: what waits is about a limit's
      // worth, never the response; the rest of it is the kernel's socket buffers.
      assert.ok(buffered <= 2 * 1024 * 1024, `${buffered} bytes buffered`);
      assert.ok(sent < BIG_BYTES / 2, `${sent} of ${BIG_BYTES} bytes sent`);
      assert.equal((await request(`http://127.0.0.1:${ports.plain}/`)).body, 'ok');
    } finally {
      socket.destroy();
    }
  });

  test('an upstream that trickles its body: the whole body arrives within the route timeout, and a route timeout cuts a longer one', async () => {
    const whole = await request(`http://127.0.0.1:${ports.plain}/trickle`);
    assert.equal(whole.status, 200);
    assert.equal(whole.body, 't'.repeat(TRICKLE_CHUNKS));
    const cut = await slowClient(ports.plain!, 'GET /trickle-cut HTTP/1.1\r\nhost: a\r\n\r\n', '', 60_000, 5_000);
    // The head had gone out: the route timeout resets the stream, and HTTP/1 can only close.
    assert.ok(cut.closed);
    assert.match(cut.text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.ok(cut.text.length - cut.text.indexOf('\r\n\r\n') - 4 < TRICKLE_CHUNKS, 'the body was cut short');
    assert.equal(await proxy.stat('cluster.web.upstream_rq_timeout'), 1);
    assert.equal((await request(`http://127.0.0.1:${ports.plain}/`)).body, 'ok');
  });

  test('10,000 idle keep-alive connections are held, each served once, while another client is served', async () => {
    const count = 10_000;
    const sockets: net.Socket[] = [];
    const worker = proxy.groupPids().find((pid) => pid !== proxy.pid)!;
    const rssKiB = (): number => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${worker}/status`, 'utf8'))![1]);
    // The earlier tests' connections to this listener close first, so that the count is ours alone.
    await waitFor('the earlier connections gone', async () => ((await proxy.stat('http.plain.downstream_cx_active')) === 0 ? true : undefined), 30_000);
    const baseline = 0;
    let closedByProxy = 0;
    // RSS at each 5,000th connection. The first 5,000 also grow what the worker sizes once to the
    // load (the young generation, glibc's kept heap): what each idle connection costs is the
    // growth over the last 5,000, against the first's.
    const rssAt: number[] = [rssKiB()];
    try {
      for (let i = 0; i < count; i += 250) {
        if (i > 0 && i % 5_000 === 0) rssAt.push(rssKiB());
        await Promise.all(
          Array.from({ length: Math.min(250, count - i) }, () =>
            new Promise<void>((resolve, reject) => {
              const socket = net.connect(ports.plain!, '127.0.0.1');
              sockets.push(socket);
              socket.once('error', reject);
              socket.once('end', () => closedByProxy++);
              socket.once('connect', () => socket.write('GET / HTTP/1.1\r\nhost: a\r\n\r\n'));
              socket.once('data', (c: Buffer) => (c.toString().startsWith('HTTP/1.1 200') ? resolve() : reject(new Error(c.toString()))));
            }),
          ),
        );
      }
      // Bounded generously: on two busy cores the proxy's worker shares them with this process.
      await waitFor('every connection counted', async () => ((await proxy.stat('http.plain.downstream_cx_active')) === baseline + count ? true : undefined), 60_000);
      assert.equal((await request(`http://127.0.0.1:${ports.plain}/`)).body, 'ok');
      assert.equal(closedByProxy, 0, 'the proxy closed none of them');
      rssAt.push(rssKiB());
      const per = (from: number, to: number): string => (((rssAt[to]! - rssAt[from]!) * 1024) / ((to - from) * 5_000)).toFixed(0);
      console.log(`worker RSS per idle keep-alive connection: ${per(1, 2)} bytes (connections 5000 to ${count}; the first 5000: ${per(0, 1)} bytes each)`);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
    await waitFor('the connections gone', async () => ((await proxy.stat('http.plain.downstream_cx_active')) === baseline ? true : undefined), 60_000);
  });
});
