// Paths and hosts the configuration names are the bytes of their UTF-8, as Envoy holds them:
// a request whose :path has those bytes (HTTP/2 carries bytes above 7f in a path; HTTP/1.1's
// request line refuses them, as Envoy's parser does) picks the route, and the path, host and
// Location the proxy writes are those bytes. Case folding is Envoy's: A-Z only.

import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import * as net from 'node:net';
import { closeServer, h2Request, listen } from '../helpers/http_peers';
import { type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };

/** The UTF-8 bytes of `text`, one character each, as node:http2 writes a latin1 header. */
const bytes = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

/**
 * An upstream that answers each request with its target and Host, byte for byte (Node's HTTP
 * server would refuse the bytes above 7f in a request line, as the proxy's HTTP/1.1 side does).
 */
function echoTargetAndHost(socket: net.Socket): void {
  let pending = '';
  socket.setEncoding('latin1');
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: string) => {
    pending += chunk;
    for (let end = pending.indexOf('\r\n\r\n'); end >= 0; end = pending.indexOf('\r\n\r\n')) {
      const head = pending.slice(0, end);
      pending = pending.slice(end + 4);
      const target = head.slice(head.indexOf(' ') + 1, head.indexOf(' HTTP/1.1'));
      const host = /\r\nhost: ([^\r]*)/i.exec(head)?.[1] ?? '';
      const body = `upstream ${target} ${host}`;
      socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n${body}`, 'latin1');
    }
  });
}

const direct = (body: string): object => ({ direct_response: { status: 200, body: { inline_string: body } } });

const ROUTES = [
  { match: { prefix: '/café/' }, route: { cluster: 'web', prefix_rewrite: '/menü/' } },
  { match: { path: '/straße' }, ...direct('path') },
  // One `.` for é's two bytes, as RE2 reads UTF-8.
  { match: { safe_regex: { google_re2: {}, regex: '/tee/caf.' } }, ...direct('regex') },
  { match: { prefix: '/rewrite/' }, route: { cluster: 'web', regex_rewrite: { pattern: { google_re2: {}, regex: 'ü' }, substitution: 'ue-ö' } } },
  { match: { prefix: '/HOST' }, route: { cluster: 'web', host_rewrite_literal: 'wörter.example' } },
  { match: { prefix: '/CAFÉ', case_sensitive: false }, ...direct('insensitive') },
  { match: { prefix: '/go' }, redirect: { host_redirect: 'bücher.example', path_redirect: '/zürich' } },
  { match: { prefix: '/' }, ...direct('fallthrough') },
];

describe('paths and hosts from the configuration are UTF-8 bytes', TIMEOUT, () => {
  let upstream: net.Server;
  let proxy: RunningProxy;
  let session: http2.ClientHttp2Session;

  before(async () => {
    upstream = net.createServer(echoTargetAndHost);
    const upstreamPort = await listen(upstream);
    proxy = await startProxy({ static_resources: { listeners: [httpListener('routes', 0, ROUTES)], clusters: [localCluster('web', upstreamPort)] } });
    session = http2.connect(`http://127.0.0.1:${await proxy.listenerPort('routes')}`);
  });

  after(async () => {
    session?.destroy();
    await proxy?.cleanup();
    if (upstream !== undefined) await closeServer(upstream);
  });

  const send = (path: string) => h2Request(session, { path: bytes(path), headers: { ':authority': 'books.example' } });

  test('path specifiers and rewrites compare and write UTF-8 bytes', async () => {
    const cases: [string, string][] = [
      ['/café/soup', 'upstream /menü/soup books.example'],
      ['/straße', 'path'],
      ['/tee/café', 'regex'],
      ['/rewrite/müsli', 'upstream /rewrite/mue-ösli books.example'],
      ['/HOST/x', 'upstream /HOST/x wörter.example'],
      // The same letters as latin1 bytes (é as e9, one byte) are another path.
      ['/caf\u00c3\u00a9/soup', 'fallthrough'],
    ];
    for (const [path, body] of cases) {
      const reply = await send(path);
      assert.deepEqual({ status: reply.status, body: reply.body }, { status: 200, body }, path);
    }
    const latin1 = await h2Request(session, { path: '/caf\u00e9/soup', headers: { ':authority': 'books.example' } });
    assert.equal(latin1.body, 'fallthrough', 'é as one latin1 byte');
  });

  test('case_sensitive: false folds A-Z only, as Envoy does', async () => {
    assert.equal((await send('/cafÉ/x')).body, 'insensitive');
    // É (c3 89) and é (c3 a9) are different bytes to Envoy; toLowerCase over bytes would also fold c3 into e3.
    assert.equal((await send('/café/x')).body, 'upstream /menü/x books.example');
    assert.equal((await send('/CAFé/x')).body, 'fallthrough');
  });

  test("a redirect's path goes in the Location header as UTF-8 bytes", async () => {
    const reply = await send('/go');
    assert.equal(reply.status, 301);
    // node:http2 reads a header value as latin1: one character a byte.
    assert.equal(reply.headers.location, `http://${bytes('bücher.example')}${bytes('/zürich')}`);
  });
});
