// Route matchers through the real binary, over HTTP/1.1 and h2c alike: a regex path (and what
// prefix_rewrite makes of it), headers, query parameters and gRPC requests each pick their route,
// and everything else falls through to the last.

import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { h2Request, type Reply, request, startUpstream, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };

interface Answer {
  readonly status: number;
  readonly body: string;
}

type Client = (path: string, headers?: Record<string, string>, method?: string) => Promise<Answer>;

/** The status and body; a gRPC answer's grpc-message stands for its body. */
const answer = async (reply: Promise<Reply>): Promise<Answer> => {
  const { status, body, headers } = await reply;
  const grpcMessage = headers['grpc-message'];
  return { status, body: typeof grpcMessage === 'string' ? `grpc-message ${grpcMessage}` : body };
};

const direct = (body: string): object => ({ direct_response: { status: 200, body: { inline_string: body } } });

const ROUTES = [
  { match: { safe_regex: { google_re2: {}, regex: '/items/[0-9]+' } }, route: { cluster: 'web', prefix_rewrite: '/item' } },
  { match: { prefix: '/', headers: [{ name: 'x-canary', exact_match: 'yes' }, { name: 'x-debug', present_match: true, invert_match: true }] }, ...direct('canary') },
  { match: { prefix: '/', query_parameters: [{ name: 'debug', present_match: true }, { name: 'user', string_match: { prefix: 'adm', ignore_case: true } }] }, ...direct('debug admin') },
  { match: { prefix: '/', grpc: {} }, ...direct('grpc') },
  { match: { prefix: '/', headers: [{ name: 'x-internal-token', present_match: true }] }, ...direct('internal') },
  { match: { prefix: '/' }, route: { cluster: 'web' } },
];

describe('route matchers on HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  let port: number;
  let session: http2.ClientHttp2Session;

  before(async () => {
    // The upstream answers with the path it was sent.
    upstream = await startUpstream('web', (req, res) => res.end(`upstream ${req.url}`));
    // x-internal-token is internal only: cleaned off before routing unless the request comes from inside.
    const listener = httpListener('routes', 0, ROUTES);
    listener.filter_chains[0].filters[0].typed_config.route_config.internal_only_headers = ['X-Internal-Token'];
    proxy = await startProxy({ static_resources: { listeners: [listener], clusters: [localCluster('web', upstream.port)] } });
    port = await proxy.listenerPort('routes');
    session = http2.connect(`http://127.0.0.1:${port}`);
  });

  after(async () => {
    session?.destroy();
    await proxy?.cleanup();
    await upstream?.close();
  });

  const http1: Client = (path, headers = {}, method = 'GET') => answer(request(port, { path, headers, method, body: method === 'POST' ? 'x' : undefined }));
  const h2c: Client = (path, headers = {}, method = 'GET') => answer(h2Request(session, { path, headers, method, body: method === 'POST' ? 'x' : undefined }));

  for (const [protocol, client] of [['HTTP/1.1', () => http1], ['h2c', () => h2c]] as const) {
    test(`${protocol}: each matcher picks its route, the rest fall through`, async () => {
      const send = client();
      const cases: [string, Record<string, string>, string, Answer][] = [
        ['/items/42?color=red', {}, 'GET', { status: 200, body: 'upstream /item?color=red' }],
        ['/items/42/parts', {}, 'GET', { status: 200, body: 'upstream /items/42/parts' }],
        ['/a', { 'x-canary': 'yes' }, 'GET', { status: 200, body: 'canary' }],
        ['/a', { 'x-canary': 'yes', 'x-debug': '1' }, 'GET', { status: 200, body: 'upstream /a' }],
        ['/a?debug&user=ADMIN', {}, 'GET', { status: 200, body: 'debug admin' }],
        ['/a?debug&user=guest', {}, 'GET', { status: 200, body: 'upstream /a?debug&user=guest' }],
        // A direct response to a gRPC request is Envoy's trailers-only answer.
        ['/pkg.Svc/Call', { 'content-type': 'application/grpc+proto' }, 'POST', { status: 200, body: 'grpc-message grpc' }],
        ['/pkg.Svc/Call', { 'content-type': 'application/grpc-web' }, 'POST', { status: 200, body: 'upstream /pkg.Svc/Call' }],
        ['/b', { 'x-internal-token': 't' }, 'GET', { status: 200, body: 'upstream /b' }],
        ['/b', { 'x-internal-token': 't', 'x-forwarded-for': '10.0.0.7' }, 'GET', { status: 200, body: 'internal' }],
      ];
      for (const [path, headers, method, expected] of cases) {
        assert.deepEqual(await send(path, headers, method), expected, `${method} ${path} ${JSON.stringify(headers)}`);
      }
    });
  }
});
