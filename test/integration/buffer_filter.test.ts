// proxy.filters.http.buffer through the real binary, over HTTP/1.1 and h2c alike: a request body
// reaches the upstream whole and with a Content-Length, one over max_request_bytes is answered
// 413 and counted in downstream_rq_too_large, the runtime key that turns the Content-Length off,
// and routes' BufferPerRoute (disabled, or a limit of their own).

import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { startUpstream, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
const LIMIT = 1024;

interface Echo {
  readonly status: number;
  /** What the upstream saw: its content-length and transfer-encoding headers, and the body's length. */
  readonly seen: { contentLength?: string; transferEncoding?: string; bodyBytes: number } | null;
  readonly body: string;
}

describe('the buffer filter on HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  let port = 0;
  let session: http2.ClientHttp2Session;

  before(async () => {
    upstream = await startUpstream('web', (req, res, body) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ contentLength: req.headers['content-length'], transferEncoding: req.headers['transfer-encoding'], bodyBytes: body.length }));
    });
    const buffer = {
      name: 'envoy.filters.http.buffer',
      typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.buffer.v3.Buffer', max_request_bytes: LIMIT },
    };
    const perRoute = (config: object) => ({ 'envoy.filters.http.buffer': { '@type': 'type.googleapis.com/envoy.extensions.filters.http.buffer.v3.BufferPerRoute', ...config } });
    const routes = [
      { match: { prefix: '/unbuffered' }, route: { cluster: 'web' }, typed_per_filter_config: perRoute({ disabled: true }) },
      { match: { prefix: '/tight' }, route: { cluster: 'web' }, typed_per_filter_config: perRoute({ buffer: { max_request_bytes: 100 } }) },
      { match: { prefix: '/' }, route: { cluster: 'web' } },
    ];
    const listener = httpListener('buffered', 0, routes, {
      stat_prefix: 'buffered',
      http_filters: [buffer, { name: 'envoy.filters.http.router' }],
    });
    proxy = await startProxy({ static_resources: { listeners: [listener], clusters: [localCluster('web', upstream.port)] } });
    port = await proxy.listenerPort('buffered');
    session = http2.connect(`http://127.0.0.1:${port}`);
  });

  after(async () => {
    session?.destroy();
    await proxy?.cleanup();
    await upstream?.close();
  });

  const reply = (status: number, body: string): Echo => ({ status, body, seen: status === 200 ? JSON.parse(body) : null });

  /** A POST over HTTP/1.1 whose body is `pieces` written one by one: chunked unless `contentLength`. */
  const http1 = (pieces: readonly string[], contentLength = false, path = '/'): Promise<Echo> =>
    new Promise((resolve, reject) => {
      const total = pieces.reduce((n, piece) => n + piece.length, 0);
      const headers = contentLength ? { 'content-length': String(total) } : {};
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path, headers, agent: false }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve(reply(res.statusCode!, body)));
      });
      req.on('error', reject);
      for (const piece of pieces) req.write(piece);
      req.end();
    });

  /** A POST over h2c whose body is `pieces`, without content-length. */
  const h2c = (pieces: readonly string[]): Promise<Echo> =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ':method': 'POST', ':path': '/' });
      let status = 0;
      let body = '';
      stream.on('response', (head) => (status = Number(head[':status'])));
      stream.on('data', (chunk: Buffer) => (body += chunk.toString()));
      stream.on('end', () => resolve(reply(status, body)));
      stream.on('error', reject);
      for (const piece of pieces) stream.write(piece);
      stream.end();
    });

  const PIECES = ['a'.repeat(300), 'b'.repeat(300), 'c'.repeat(100)];

  test('HTTP/1.1: a chunked body reaches the upstream whole, with its Content-Length', async () => {
    assert.deepEqual((await http1(PIECES)).seen, { contentLength: '700', bodyBytes: 700 });
    // A body with its own length keeps it.
    assert.deepEqual((await http1(PIECES, true)).seen, { contentLength: '700', bodyBytes: 700 });
    // An empty chunked body is given a length of 0.
    assert.deepEqual((await http1([''])).seen, { contentLength: '0', bodyBytes: 0 });
  });

  test('h2c: a body without content-length reaches the upstream whole, with one', async () => {
    assert.deepEqual((await h2c(PIECES)).seen, { contentLength: '700', bodyBytes: 700 });
  });

  test('a body over max_request_bytes is answered 413 and counted', async () => {
    const over = ['x'.repeat(600), 'y'.repeat(600)];
    for (const answer of [await http1(over), await http1(over, true), await h2c(over)]) {
      assert.equal(answer.status, 413);
      assert.equal(answer.body, 'Payload Too Large');
    }
    assert.equal(await proxy.stat('http.buffered.downstream_rq_too_large'), 3);
    assert.match((await proxy.admin('/stats/prometheus')).body, /^proxy_http_downstream_rq_too_large\{proxy_http_conn_manager_prefix="buffered"\} 3$/m);
    // Exactly the limit is fine.
    assert.equal((await http1(['z'.repeat(LIMIT)])).seen?.bodyBytes, LIMIT);
  });

  test('the runtime key envoy.reloadable_features.buffer_filter_populate_content_length turns the Content-Length off', async () => {
    const key = 'envoy.reloadable_features.buffer_filter_populate_content_length';
    assert.equal((await proxy.admin(`/runtime_modify?${key}=false`, 'POST')).status, 200);
    assert.deepEqual((await http1(PIECES)).seen, { transferEncoding: 'chunked', bodyBytes: 700 });
    assert.equal((await proxy.admin(`/runtime_modify?${key}=true`, 'POST')).status, 200);
    assert.deepEqual((await http1(PIECES)).seen, { contentLength: '700', bodyBytes: 700 });
  });

  test("a route's BufferPerRoute: disabled lets the body stream on, a buffer of its own sets its limit", async () => {
    assert.deepEqual((await http1(PIECES, false, '/unbuffered')).seen, { transferEncoding: 'chunked', bodyBytes: 700 });
    assert.equal((await http1(PIECES, false, '/tight')).status, 413);
    assert.deepEqual((await http1(['x'.repeat(100)], false, '/tight')).seen, { contentLength: '100', bodyBytes: 100 });
  });
});
