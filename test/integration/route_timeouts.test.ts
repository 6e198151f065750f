// A route's gRPC timeouts through the real binary, over HTTP/1.1 and h2c alike: max_grpc_timeout
// caps a gRPC request's grpc-timeout (none counts as infinite), grpc_timeout_offset is taken off
// it first, the upstream is told the result in grpc-timeout and x-proxy-expected-rq-timeout-ms,
// and the route times out by it; a request that is not gRPC keeps the route's timeout.

import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { h2Request, type Reply, type RequestOptions, request, startUpstream, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };
const GRPC = { 'content-type': 'application/grpc' };

const ROUTES = [
  // Deadlines of 300 ms and more: a request on a loaded machine can take tens of milliseconds.
  { match: { prefix: '/capped' }, route: { cluster: 'echo', max_grpc_timeout: '1s' } },
  { match: { prefix: '/offset' }, route: { cluster: 'echo', max_grpc_timeout: '0s', grpc_timeout_offset: '0.5s' } },
];

describe('gRPC route timeouts on HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  let port: number;
  let session: http2.ClientHttp2Session;

  before(async () => {
    // Answers with the deadlines it was told; /hold never answers.
    upstream = await startUpstream('echo', (req, res) => {
      if (req.url!.endsWith('/hold')) return;
      res.end(`${req.headers['grpc-timeout'] ?? '-'} ${req.headers['x-proxy-expected-rq-timeout-ms'] ?? '-'}`);
    });
    proxy = await startProxy({ static_resources: { listeners: [httpListener('timeouts', 0, ROUTES)], clusters: [localCluster('echo', upstream.port)] } });
    port = await proxy.listenerPort('timeouts');
    session = http2.connect(`http://127.0.0.1:${port}`);
  });

  after(async () => {
    session?.destroy();
    await proxy?.cleanup();
    await upstream?.close();
  });

  const clients: [string, (options: RequestOptions) => Promise<Reply>][] = [
    ['HTTP/1.1', (options) => request(port, { method: 'POST', body: 'x', ...options })],
    ['h2c', (options) => h2Request(session, { method: 'POST', body: 'x', ...options })],
  ];

  for (const [protocol, send] of clients) {
    test(`${protocol}: the deadline the upstream is told`, async () => {
      const cases: [string, Record<string, string>, string][] = [
        ['/capped', { ...GRPC, 'grpc-timeout': '10S' }, '1000m 1000'],
        ['/capped', { ...GRPC, 'grpc-timeout': '500m' }, '500m 500'],
        // None is infinite: the cap applies.
        ['/capped', GRPC, '1000m 1000'],
        ['/offset', { ...GRPC, 'grpc-timeout': '2S' }, '1500m 1500'],
        // An offset that would leave nothing is not taken.
        ['/offset', { ...GRPC, 'grpc-timeout': '300000u' }, '300m 300'],
        // No deadline and no cap: none is sent.
        ['/offset', GRPC, '- -'],
        // Not gRPC: the route's own timeout (15 s by default), the header left alone.
        ['/capped', { 'content-type': 'text/plain', 'grpc-timeout': '1S' }, '1S 15000'],
      ];
      for (const [path, headers, expected] of cases) {
        const reply = await send({ path, headers });
        assert.deepEqual([reply.status, reply.body], [200, expected], `${path} ${JSON.stringify(headers)}`);
      }
    });

    test(`${protocol}: the route times out by the capped deadline`, async () => {
      const started = Date.now();
      const reply = await send({ path: '/capped/hold', headers: { ...GRPC, 'grpc-timeout': '1H' } });
      // The 504 told in gRPC terms: UNAVAILABLE in a trailers-only answer.
      assert.deepEqual([reply.status, reply.headers['grpc-status'], reply.headers['grpc-message']], [200, '14', 'upstream request timeout']);
      assert.ok(Date.now() - started < 5000, 'well before the hour asked for');
    });
  }
});
