// request_mirror_policies through the real binary, over HTTP/1.1 and h2c alike: the mirror gets
// a copy of the whole request with `-shadow` on its host, its answer never reaches the client
// (though its cluster counts it), a runtime fraction of 0 mirrors nothing, a body over the
// buffer limit gives the mirror up, and a mirror slower than the route timeout is cut off.

import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { h2Request, request, startUpstream, type Reply, type RequestOptions, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };
const BUFFER_LIMIT = 4096;

const mirror = (cluster: string, extra: object = {}) => ({ request_mirror_policies: [{ cluster, ...extra }] });

const ROUTES = [
  { match: { prefix: '/never' }, route: { cluster: 'main', ...mirror('mirror', { runtime_fraction: { default_value: { numerator: 0 } } }) } },
  { match: { prefix: '/gone' }, route: { cluster: 'main', ...mirror('removed') } },
  { match: { prefix: '/slow' }, route: { cluster: 'main', timeout: '0.3s', ...mirror('mirror') } },
  { match: { prefix: '/' }, route: { cluster: 'main', ...mirror('mirror') } },
];

describe('request mirroring on HTTP/1.1 and h2c', TIMEOUT, () => {
  let main: Upstream;
  let shadow: Upstream;
  let proxy: RunningProxy;
  let port: number;
  let session: http2.ClientHttp2Session;

  before(async () => {
    main = await startUpstream('main', (req, res, body) => res.end(`main ${req.method} ${body.length}`));
    // The mirror answers what the client must never see, and /slow not at all.
    shadow = await startUpstream('mirror', (req, res) => {
      if (req.url!.startsWith('/slow')) return;
      res.statusCode = 503;
      res.end('from the mirror');
    });
    const listener = { ...httpListener('mirrored', 0, ROUTES), per_connection_buffer_limit_bytes: BUFFER_LIMIT };
    proxy = await startProxy({
      static_resources: { listeners: [listener], clusters: [localCluster('main', main.port), localCluster('mirror', shadow.port)] },
    });
    port = await proxy.listenerPort('mirrored');
    session = http2.connect(`http://127.0.0.1:${port}`);
  });

  after(async () => {
    session?.destroy();
    await proxy?.cleanup();
    await main?.close();
    await shadow?.close();
  });

  const clients: [string, (options: RequestOptions) => Promise<Reply>][] = [
    ['HTTP/1.1', (options) => request(port, { ...options, headers: { host: 'front.example:8080', ...options.headers } })],
    ['h2c', (options) => h2Request(session, { ...options, headers: { ':authority': 'front.example:8080', ...options.headers } })],
  ];

  const stat = async (name: string): Promise<number> => (await proxy.stat(name)) ?? 0;

  for (const [protocol, send] of clients) {
    test(`${protocol}: the mirror gets the whole request; the client gets the main cluster's answer`, async () => {
      const before503 = await stat('cluster.mirror.upstream_rq_503');
      const seen = shadow.seen.length;
      const body = 'x'.repeat(1000);
      const reply = await send({ method: 'POST', path: `/copy?from=${protocol}`, headers: { 'content-type': 'text/plain' }, body });
      assert.equal(reply.status, 200);
      assert.equal(reply.body, 'main POST 1000');
      const copy = await waitFor('the mirrored request', () => shadow.seen[seen]);
      const original = main.seen.at(-1)!;
      assert.equal(copy.method, 'POST');
      assert.equal(copy.url, `/copy?from=${protocol}`);
      assert.equal(copy.bodyBytes, 1000);
      assert.equal(copy.headers.host, 'front.example-shadow:8080');
      assert.equal(original.headers.host, 'front.example:8080');
      assert.equal(copy.headers['x-proxy-internal'], 'true');
      assert.equal(copy.headers['x-request-id'], original.headers['x-request-id']);
      // Counted in the mirror's cluster, as any request to it.
      await waitFor('the mirror response counted', async () => ((await stat('cluster.mirror.upstream_rq_503')) === before503 + 1 ? true : undefined));
    });

    test(`${protocol}: a fraction of 0 and a cluster that is gone mirror nothing`, async () => {
      const seen = shadow.seen.length;
      for (const path of ['/never', '/gone']) {
        const reply = await send({ path });
        assert.equal(reply.status, 200, path);
      }
      // A request mirrored after these would show them up first.
      await send({ path: '/marker' });
      const copy = await waitFor('the marker copy', () => shadow.seen[seen]);
      assert.equal(copy.url, '/marker');
    });

    test(`${protocol}: a body over the buffer limit gives the mirror up`, async () => {
      const abandoned = await stat('cluster.main.retry_or_shadow_abandoned');
      const seen = shadow.seen.length;
      const reply = await send({ method: 'POST', path: '/too-big', body: 'y'.repeat(BUFFER_LIMIT * 4) });
      assert.equal(reply.status, 200);
      assert.equal(reply.body, `main POST ${BUFFER_LIMIT * 4}`);
      assert.equal(await stat('cluster.main.retry_or_shadow_abandoned'), abandoned + 1);
      await send({ path: '/marker-after-big' });
      const copy = await waitFor('the marker copy', () => shadow.seen[seen]);
      assert.equal(copy.url, '/marker-after-big');
    });

    test(`${protocol}: a mirror slower than the route timeout is cut off and counted`, async () => {
      const timeouts = await stat('cluster.mirror.upstream_rq_timeout');
      const reply = await send({ path: '/slow' });
      assert.equal(reply.status, 200);
      await waitFor('the mirror timeout', async () => ((await stat('cluster.mirror.upstream_rq_timeout')) === timeouts + 1 ? true : undefined));
      assert.equal(await stat('cluster.main.upstream_rq_timeout'), 0);
    });
  }
});
