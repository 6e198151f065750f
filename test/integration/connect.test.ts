// CONNECT through the real binary, over HTTP/1.1 and h2c: refused (403) where no upgrade_configs
// allow it; terminated here when the route's CONNECT upgrade has a connect_config (the payload
// goes to a TCP echo server, under a 200 of ours); proxied as it is to an HTTP/1 upstream that
// answers CONNECT itself otherwise. Only connect_matcher routes take a CONNECT.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { closeServer, listen } from '../helpers/http_peers';
import { type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };
const TARGET = 'tunnel.example:443';

/** What a tunnel carries back: each chunk it gets, upper-cased, so that an echo is told from a copy. */
function shout(socket: net.Socket): void {
  socket.on('data', (chunk: Buffer) => socket.write(chunk.toString('latin1').toUpperCase()));
  socket.on('end', () => socket.end());
  socket.on('error', () => undefined);
}

/**
 * HTTP/1.1 CONNECT on a raw socket: the status line and header block, then `payload` sent
 * through the tunnel and what comes back until the proxy closes it.
 */
function connectHttp1(port: number, payload: string): Promise<{ head: string; tunnel: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`CONNECT ${TARGET} HTTP/1.1\r\nHost: ${TARGET}\r\n\r\n`));
    let received = '';
    let head: string | null = null;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (head !== null || !received.includes('\r\n\r\n')) return;
      const end = received.indexOf('\r\n\r\n') + 4;
      head = received.slice(0, end);
      received = received.slice(end);
      socket.end(head.startsWith('HTTP/1.1 200') ? payload : '');
    });
    socket.on('close', () => resolve({ head: head ?? received, tunnel: head === null ? '' : received }));
    socket.on('error', reject);
  });
}

/** h2c CONNECT: the status, then `payload` through the stream and what comes back until it ends. */
function connectH2(port: number, payload: string): Promise<{ status: number; tunnel: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', reject);
    const stream = session.request({ ':method': 'CONNECT', ':authority': TARGET }, { endStream: false });
    let status = 0;
    let tunnel = '';
    // Refused, the request still has its side to end: nothing else ends a CONNECT's.
    stream.on('response', (headers) => {
      status = Number(headers[':status']);
      stream.end(status === 200 ? payload : '');
    });
    stream.setEncoding('latin1');
    stream.on('data', (chunk: string) => (tunnel += chunk));
    stream.on('close', () => {
      session.close();
      resolve({ status, tunnel });
    });
    stream.on('error', reject);
  });
}

describe('CONNECT', TIMEOUT, () => {
  let echo: net.Server;
  let connectProxy: http.Server;
  let proxy: RunningProxy;
  const ports: Record<string, number> = {};
  /** The authority each CONNECT the HTTP/1 upstream got asked for. */
  const upstreamTargets: string[] = [];

  before(async () => {
    echo = net.createServer(shout);
    await listen(echo);
    // An HTTP/1 upstream that terminates CONNECT itself.
    connectProxy = http.createServer((_req, res) => res.writeHead(405).end());
    connectProxy.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      upstreamTargets.push(req.url ?? '');
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) socket.unshift(head);
      shout(socket);
    });
    await listen(connectProxy);
    const terminate = { match: { connect_matcher: {} }, route: { cluster: 'echo', upgrade_configs: [{ upgrade_type: 'CONNECT', connect_config: {} }] } };
    const terminateOne = { match: { connect_matcher: {} }, route: { cluster: 'echo_one', upgrade_configs: [{ upgrade_type: 'CONNECT', connect_config: {} }] } };
    const proxied = { match: { connect_matcher: {} }, route: { cluster: 'connect_proxy' } };
    const plain = { match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'plain' } } };
    const listeners = [
      httpListener('terminate', 0, [terminate, plain], { upgrade_configs: [{ upgrade_type: 'CONNECT' }] }),
      httpListener('proxied', 0, [proxied, plain], { upgrade_configs: [{ upgrade_type: 'CONNECT' }], stat_prefix: 'proxied' }),
      // CONNECT is enabled neither here nor by the route that would take it.
      httpListener('refused', 0, [proxied, plain], { stat_prefix: 'refused' }),
      // Enabled, but no route takes a CONNECT: prefix routes never match its empty path.
      httpListener('unrouted', 0, [plain], { upgrade_configs: [{ upgrade_type: 'CONNECT' }], stat_prefix: 'unrouted' }),
      httpListener('one', 0, [terminateOne], { upgrade_configs: [{ upgrade_type: 'CONNECT' }], stat_prefix: 'one' }),
    ];
    const echoPort = (echo.address() as net.AddressInfo).port;
    const clusters = [
      localCluster('echo', echoPort),
      localCluster('connect_proxy', (connectProxy.address() as net.AddressInfo).port),
      { ...localCluster('echo_one', echoPort), circuit_breakers: { thresholds: [{ max_connections: 1 }] } },
    ];
    proxy = await startProxy({ static_resources: { listeners, clusters } });
    for (const name of ['terminate', 'proxied', 'refused', 'unrouted', 'one']) ports[name] = await proxy.listenerPort(name);
  });

  after(async () => {
    await proxy?.cleanup();
    if (connectProxy !== undefined) await closeServer(connectProxy);
    if (echo !== undefined) await closeServer(echo);
  });

  test('HTTP/1.1: terminated here, the payload reaches the TCP host and its answer comes back', async () => {
    const { head, tunnel } = await connectHttp1(ports.terminate!, 'hello');
    assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
    // A tunnel's 2xx has no framing.
    assert.doesNotMatch(head, /content-length|transfer-encoding/i);
    assert.equal(tunnel, 'HELLO');
  });

  test('h2c: terminated here, the stream carries the tunnel', async () => {
    assert.deepEqual(await connectH2(ports.terminate!, 'hello'), { status: 200, tunnel: 'HELLO' });
  });

  test('HTTP/1.1 and h2c: proxied as they are to an HTTP/1 upstream that answers CONNECT', async () => {
    const { head, tunnel } = await connectHttp1(ports.proxied!, 'via upstream');
    assert.match(head, /^HTTP\/1\.1 200 /);
    assert.equal(tunnel, 'VIA UPSTREAM');
    assert.deepEqual(await connectH2(ports.proxied!, 'over h2'), { status: 200, tunnel: 'OVER H2' });
    assert.deepEqual(upstreamTargets, [TARGET, TARGET]);
  });

  test('not enabled: 403 and downstream_rq_ws_on_non_ws_route; enabled but unrouted: 404', async () => {
    assert.match((await connectHttp1(ports.refused!, '')).head, /^HTTP\/1\.1 403 /);
    assert.equal((await connectH2(ports.refused!, '')).status, 403);
    assert.match((await connectHttp1(ports.unrouted!, '')).head, /^HTTP\/1\.1 404 /);
    assert.equal((await connectH2(ports.unrouted!, '')).status, 404);
    assert.equal(await proxy.stat('http.refused.downstream_rq_ws_on_non_ws_route'), 2);
  });

  test("a terminated CONNECT's connection counts against max_connections", async () => {
    // One tunnel held open: the next finds the cluster full.
    const held = net.connect(ports.one!, '127.0.0.1', () => held.write(`CONNECT ${TARGET} HTTP/1.1\r\nHost: ${TARGET}\r\n\r\n`));
    held.on('error', () => undefined);
    await new Promise<void>((resolve) => held.once('data', () => resolve()));
    try {
      assert.match((await connectHttp1(ports.one!, 'x')).head, /^HTTP\/1\.1 503 /);
      assert.equal(await proxy.stat('cluster.echo_one.upstream_cx_overflow'), 1);
    } finally {
      held.destroy();
    }
  });

  test('the tunnels count as upgrades; other requests on a CONNECT listener route as ever', async () => {
    // The two terminated above, one per protocol.
    assert.equal(await proxy.stat('http.ingress_http.downstream_cx_upgrades_total'), 2);
    assert.equal(await proxy.stat('http.ingress_http.downstream_cx_upgrades_active'), 0);
    const plain = await new Promise<string>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: ports.terminate, path: '/' }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(body));
      }).on('error', reject);
    });
    assert.equal(plain, 'plain');
  });
});
