// A virtual host's include_request_attempt_count and include_attempt_count_in_response, through
// the real binary over HTTP/1.1 and h2c: each try tells the upstream its number, and the response
// tells the client how many tries it took (Envoy's x-envoy-attempt-count).

import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { h2Request, type Reply, request, startUpstream, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };

const ROUTES = [
  { match: { prefix: '/slow' }, route: { cluster: 'web', timeout: '0.2s' } },
  { match: { prefix: '/' }, route: { cluster: 'web', retry_policy: { retry_on: '5xx', num_retries: 2 } } },
];

describe('attempt counts on HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  let port: number;
  let session: http2.ClientHttp2Session;

  before(async () => {
    // The first try of a /flaky request fails; every answer names the try it was; /slow gets none.
    upstream = await startUpstream('web', (req, res) => {
      if (req.url === '/slow') return;
      const attempt = String(req.headers['x-proxy-attempt-count']);
      res.statusCode = req.url === '/flaky' && attempt === '1' ? 503 : 200;
      res.end(`try ${attempt}`);
    });
    const listener = httpListener('counted', 0, ROUTES);
    Object.assign(listener.filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0], {
      include_request_attempt_count: true,
      include_attempt_count_in_response: true,
    });
    proxy = await startProxy({ static_resources: { listeners: [listener], clusters: [localCluster('web', upstream.port)] } });
    port = await proxy.listenerPort('counted');
    session = http2.connect(`http://127.0.0.1:${port}`);
  });

  after(async () => {
    session?.destroy();
    await proxy?.cleanup();
    await upstream?.close();
  });

  const sends: readonly [string, (path: string) => Promise<Reply>][] = [
    ['HTTP/1.1', (path) => request(port, { path })],
    ['h2c', (path) => h2Request(session, { path })],
  ];
  for (const [protocol, send] of sends) {
    test(`${protocol}: the upstream sees each try's number, the client the number of tries`, async () => {
      const once = await send('/steady');
      assert.deepEqual([once.status, once.body, once.headers['x-proxy-attempt-count']], [200, 'try 1', '1']);
      const retried = await send('/flaky');
      assert.deepEqual([retried.status, retried.body, retried.headers['x-proxy-attempt-count']], [200, 'try 2', '2']);
      // The router's own reply says so too (Envoy's modify_headers).
      const timedOut = await send('/slow');
      assert.deepEqual([timedOut.status, timedOut.body, timedOut.headers['x-proxy-attempt-count']], [504, 'upstream request timeout', '1']);
    });
  }
});
