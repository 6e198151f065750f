// The HTTP/1 codec's strictness through the real binary: requests two parsers could read
// differently are answered 400 and their connection closed before any of them reaches the
// upstream, as are methods outside Envoy 1.16's table; HTTP/1.0 clients are served with
// accept_http_10; and a response's transfer coding other than chunked reaches the client intact.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as zlib from 'node:zlib';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { closeServer, listen, startUpstream, type Upstream } from '../helpers/http_peers';
import { giveUpAfter, type RunningProxy, startProxy } from '../helpers/proxy_process';

const GZIPPED_TEXT = 'a body the proxy must not decode, '.repeat(20);

function bootstrap(webPort: number, gzipPort: number) {
  const routes = [
    { match: { prefix: '/gzip' }, route: { cluster: 'gzip' } },
    { match: { prefix: '/' }, route: { cluster: 'web' } },
  ];
  const http10 = { http_protocol_options: { accept_http_10: true, default_host_for_http_10: 'legacy.local' } };
  return {
    static_resources: {
      listeners: [httpListener('http_in', 0, routes, http10)],
      clusters: [localCluster('web', webPort), localCluster('gzip', gzipPort)],
    },
  };
}

/**
 * An upstream answering with a gzip transfer coding: for /gzip the body ends with the close, for
 * /gzip-chunked it is chunked on top and the whole response goes out in one write.
 */
async function startGzipUpstream(): Promise<{ server: net.Server; port: number; requests: () => number }> {
  let requests = 0;
  const body = zlib.gzipSync(GZIPPED_TEXT);
  const server = net.createServer((socket) => {
    let head = '';
    socket.on('data', (c: Buffer) => {
      head += c.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      requests++;
      const chunked = head.startsWith('GET /gzip-chunked ');
      const framing = chunked ? 'gzip, chunked' : 'gzip';
      const payload = chunked ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]) : body;
      socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: ${framing}\r\n\r\n`), payload]));
    });
    socket.on('error', () => undefined);
  });
  await listen(server);
  return { server, port: (server.address() as net.AddressInfo).port, requests: () => requests };
}

/** A raw client connection: what the proxy sent, and whether it closed. */
class RawClient {
  received = Buffer.alloc(0);
  ended = false;
  private readonly socket: net.Socket;
  private wake: () => void = () => undefined;

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (c: Buffer) => {
      this.received = Buffer.concat([this.received, c]);
      this.wake();
    });
    this.socket.on('end', () => {
      this.ended = true;
      this.wake();
    });
    this.socket.on('error', () => undefined);
  }

  send(wire: string | Buffer): void {
    this.socket.write(typeof wire === 'string' ? Buffer.from(wire, 'latin1') : wire);
  }

  /** Everything not yet taken by nextResponse(), once the proxy closes the connection. */
  async untilEnd(): Promise<string> {
    while (!this.ended) await new Promise<void>((resolve) => (this.wake = resolve));
    return this.received.toString('latin1');
  }

  /** The next response framed by content-length: its head (lower-cased names) and body. */
  async nextResponse(): Promise<{ head: string; body: string }> {
    for (;;) {
      const text = this.received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)\r\n/.exec(text.slice(0, end + 2));
      if (end >= 0 && length !== null && text.length >= end + 4 + Number(length[1])) {
        const total = end + 4 + Number(length[1]);
        this.received = this.received.subarray(total);
        return { head: text.slice(0, end + 2), body: text.slice(end + 4, total) };
      }
      assert.ok(!this.ended, `closed before a whole response: ${JSON.stringify(text)}`);
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

describe('HTTP/1 strictness through the proxy binary', { timeout: 60_000 }, () => {
  let web: Upstream;
  let gzip: Awaited<ReturnType<typeof startGzipUpstream>>;
  let proxy: RunningProxy;
  let port: number;
  const clients: RawClient[] = [];

  function client(): RawClient {
    const c = new RawClient(port);
    clients.push(c);
    return c;
  }

  before(async () => {
    web = await startUpstream('web', (req, res) => {
      if (req.url === '/stream') {
        // No content-length: node frames it chunked.
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first;');
        res.end('last');
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ url: req.url, host: req.headers.host }));
    });
    gzip = await startGzipUpstream();
    proxy = await startProxy(bootstrap(web.port, gzip.port));
    port = await proxy.listenerPort('http_in');
  });

  after(async () => {
    for (const c of clients) c.close();
    await proxy?.cleanup();
    await web?.close();
    if (gzip) await closeServer(gzip.server);
  });

  test('requests read differently by other parsers: 400, connection closed, upstream never sees them', async () => {
    const smuggled = 'GET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n';
    const chunkedPost = (framing: string, body: string) => `POST /p HTTP/1.1\r\nHost: h\r\n${framing}\r\n${body}`;
    const te = 'Transfer-Encoding: chunked\r\n';
    const wires = [
      chunkedPost('Transfer-Encoding: chunked\xa0\r\n', `0\r\n\r\n${smuggled}`),
      chunkedPost('Transfer-Encoding: chunked, chunked\r\n', `0\r\n\r\n${smuggled}`),
      chunkedPost('Transfer-Encoding: xchunked\r\n', `0\r\n\r\n${smuggled}`),
      chunkedPost('Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n', `0\r\n\r\n${smuggled}`),
      chunkedPost(`Content-Length: 5\r\n${te}`, `0\r\n\r\n${smuggled}`),
      chunkedPost('Content-Length: +5\r\n', 'hello'),
      chunkedPost('Content-Length: 5, 6\r\n', 'hello'),
      chunkedPost(te, `5\r\r\nhello\r\n0\r\n\r\n`),
      chunkedPost(te, `5 \r\nhello\r\n0\r\n\r\n`),
      chunkedPost(te, `2;\r\nhe\r\n0\r\n\r\n`),
      chunkedPost(te, `5;a="b; c\r\nhello\r\n0\r\n\r\n`),
      'GET /caf\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n',
      'GET relative HTTP/1.1\r\nHost: h\r\n\r\n',
      'GET / HTTP/1.1\r\nHost: a b\r\n\r\n',
      'GET / HTTP/1.1\r\nHost: a/b@c\r\n\r\n',
      'GET http://user:pw@host/ HTTP/1.1\r\nHost: host\r\n\r\n',
      '\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n',
    ];
    for (const wire of wires) {
      const c = client();
      c.send(wire);
      const response = await c.nextResponse();
      assert.match(response.head, /^HTTP\/1\.1 400 Bad Request\r\n/, JSON.stringify(wire));
      assert.match(response.head, /\r\nconnection: close\r\n/, JSON.stringify(wire));
      assert.equal(await c.untilEnd(), '', 'the connection closes after the 400, with nothing more');
    }
    // The upstream records requests whose body it got whole: a head sent on before its body was
    // refused would not count, but a smuggled request or a misread body would.
    assert.deepEqual(web.seen, []);
    assert.equal(await proxy.stat('http.ingress_http.downstream_cx_protocol_error'), wires.length);
    assert.equal(await proxy.stat('http.ingress_http.downstream_rq_4xx'), wires.length);
  });

  test('methods outside Envoy 1.16\'s table (case-sensitive) are 400 at the codec; the upstream never sees them', async () => {
    const errors = (await proxy.stat('http.ingress_http.downstream_cx_protocol_error')) ?? 0;
    const seen = web.seen.length;
    const methods = ['FOOBAR', 'get', 'MKCOLA'];
    for (const method of methods) {
      const c = client();
      c.send(`${method} /m HTTP/1.1\r\nHost: h\r\n\r\n`);
      const response = await Promise.race([c.nextResponse(), giveUpAfter(5000).then(() => null)]);
      if (response === null) assert.fail(`${method}: no response of our own in 5 s, got ${JSON.stringify(c.received.toString('latin1'))}`);
      assert.match(response.head, /^HTTP\/1\.1 400 Bad Request\r\n/, method);
      assert.match(response.head, /\r\nconnection: close\r\n/, method);
      assert.equal(await c.untilEnd(), '', 'the connection closes after the 400');
    }
    assert.equal(web.seen.length, seen);
    assert.equal(await proxy.stat('http.ingress_http.downstream_cx_protocol_error'), errors + methods.length);
    // A method of the table that few clients use still goes through.
    const known = client();
    known.send('MKCOL /dav HTTP/1.1\r\nHost: h\r\n\r\n');
    assert.match((await known.nextResponse()).head, /^HTTP\/1\.1 200 OK\r\n/);
  });

  test('HTTP/1.0 with accept_http_10: default host, keep-alive on request, close-delimited bodies', async () => {
    const plain = client();
    plain.send('GET /one HTTP/1.0\r\n\r\n');
    const text = await plain.untilEnd();
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(text, /\r\nconnection: close\r\n/);
    assert.deepEqual(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)), { url: '/one', host: 'legacy.local' });

    const keepAlive = client();
    keepAlive.send('GET /ka1 HTTP/1.0\r\nConnection: keep-alive\r\nHost: example.com\r\n\r\n');
    const first = await keepAlive.nextResponse();
    assert.match(first.head, /\r\nconnection: keep-alive\r\n/);
    assert.doesNotMatch(first.head, /transfer-encoding/);
    assert.deepEqual(JSON.parse(first.body), { url: '/ka1', host: 'example.com' });
    keepAlive.send('GET /ka2 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
    const second = await keepAlive.nextResponse();
    assert.match(second.head, /\r\nconnection: keep-alive\r\n/);
    assert.deepEqual(JSON.parse(second.body), { url: '/ka2', host: 'legacy.local' });
    assert.equal(keepAlive.ended, false);

    // The upstream chunks this one; a 1.0 client gets it unchunked, ended by the close.
    const streamed = client();
    streamed.send('GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
    const stream = await streamed.untilEnd();
    const [head, body] = stream.split('\r\n\r\n');
    assert.match(`${head}\r\n`, /\r\nconnection: close\r\n/);
    assert.doesNotMatch(head, /transfer-encoding|content-length/);
    assert.equal(body, 'first;last');

    // A transfer coding a 1.0 client cannot undo is not sent to it.
    for (const path of ['/gzip', '/gzip-chunked']) {
      const coded = client();
      coded.send(`GET ${path} HTTP/1.0\r\n\r\n`);
      assert.match(await coded.untilEnd(), /^HTTP\/1\.1 502 Bad Gateway\r\n/, path);
    }
    // The upstream was reset from inside its parser's callback: the worker is still serving the
    // keep-alive connection opened before (a crash would have closed it).
    keepAlive.send('GET /ka3 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
    assert.deepEqual(JSON.parse((await keepAlive.nextResponse()).body), { url: '/ka3', host: 'legacy.local' });
  });

  test('a response with Transfer-Encoding: gzip reaches an HTTP/1.1 client with its coding', async () => {
    const before = gzip.requests();
    for (const path of ['/gzip', '/gzip-chunked']) {
      const reply = await new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        });
        req.on('error', reject);
      });
      assert.equal(reply.headers['transfer-encoding'], 'gzip, chunked', path);
      assert.equal(zlib.gunzipSync(reply.body).toString(), GZIPPED_TEXT, path);
    }
    assert.equal(gzip.requests(), before + 2);
  });
});
