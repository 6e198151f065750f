// Internal redirects (a route's internal_redirect_policy) through the real binary, over HTTP/1.1
// and h2c alike: a 302 followed to another route and cluster, the client seeing only the final
// response; a redirect loop stopped by max_internal_redirects and by previous_routes; what passes
// through instead (a code the policy does not name, a request with a body, a cross-scheme or
// relative Location); a keep-alive connection's next request starting afresh; x-forwarded-for
// appended once under use_remote_address; the counters; the drained redirect's connection serving
// again; and the access log lines Envoy 1.16 writes for a followed redirect.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { h2Request, type Reply, request, type RequestOptions, startUpstream, type Upstream } from '../helpers/http_peers';
import { makeTempDir, type RunningProxy, sleep, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
const HOST = 'site.example';
const FILE_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';
const PREVIOUS_ROUTES = {
  name: 'envoy.internal_redirect_predicates.previous_routes',
  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.internal_redirect.previous_routes.v3.PreviousRoutesConfig' },
};
const LOG_FORMAT = '%REQ(:PATH)% %RESPONSE_CODE% %RESPONSE_CODE_DETAILS% %UPSTREAM_CLUSTER% %ROUTE_NAME% %REQ(X-PROXY-ORIGINAL-URL)%\n';

/** Where the origin redirects each path it serves, and with which code. */
const REDIRECTS: Record<string, [number, string]> = {
  '/start': [302, `http://${HOST}/landing?from=start`],
  '/code307': [307, `http://${HOST}/landing`],
  '/loop': [302, `http://${HOST}/loop`],
  '/visit': [302, `http://${HOST}/visit`],
  '/cross': [302, `https://${HOST}/landing`],
  '/cross-allowed': [302, `https://${HOST}/landing`],
  '/relative': [302, '/landing'],
  '/legacy': [302, `http://${HOST}/landing?from=legacy`],
};
const REDIRECT_BODY = 'moved elsewhere';

const origin = (name: string, policy: object): object => ({ name, match: { path: `/${name}` }, route: { cluster: 'origin', ...policy } });

const ROUTES = [
  origin('start', { internal_redirect_policy: {} }),
  origin('code307', { internal_redirect_policy: {} }),
  origin('loop', { internal_redirect_policy: { max_internal_redirects: 2 } }),
  origin('visit', { internal_redirect_policy: { max_internal_redirects: 5, predicates: [PREVIOUS_ROUTES] } }),
  origin('cross', { internal_redirect_policy: {} }),
  origin('cross-allowed', { internal_redirect_policy: { allow_cross_scheme_redirect: true } }),
  origin('relative', { internal_redirect_policy: {} }),
  // Envoy 1.16's deprecated form: the default policy.
  origin('legacy', { internal_redirect_action: 'HANDLE_INTERNAL_REDIRECT' }),
  { name: 'landing', match: { prefix: '/landing' }, route: { cluster: 'landing' } },
];

type Client = (path: string, options?: RequestOptions) => Promise<Reply>;

describe('internal redirects on HTTP/1.1 and h2c', TIMEOUT, () => {
  let dir: string;
  let originServer: Upstream;
  let landing: Upstream;
  let proxy: RunningProxy;
  let port: number;
  let edgePort: number;
  let session: http2.ClientHttp2Session;
  let logPath: string;

  before(async () => {
    dir = makeTempDir();
    logPath = path.join(dir, 'access.log');
    originServer = await startUpstream('origin', (req, res) => {
      const [status, location] = REDIRECTS[req.url!.split('?')[0]] ?? [404, ''];
      res.writeHead(status, { location, 'content-type': 'text/plain' });
      res.end(REDIRECT_BODY);
    });
    landing = await startUpstream('landing');
    const accessLog = [{ name: 'envoy.access_loggers.file', typed_config: { '@type': FILE_LOG, path: logPath, log_format: { text_format: LOG_FORMAT } } }];
    proxy = await startProxy(
      {
        static_resources: {
          listeners: [httpListener('in', 0, ROUTES, { access_log: accessLog }), httpListener('edge', 0, ROUTES, { stat_prefix: 'edge', use_remote_address: true })],
          clusters: [localCluster('origin', originServer.port), localCluster('landing', landing.port)],
        },
      },
      ['--file-flush-interval-msec', '20'],
    );
    port = await proxy.listenerPort('in');
    edgePort = await proxy.listenerPort('edge');
    session = http2.connect(`http://127.0.0.1:${port}`);
  });

  after(async () => {
    session?.destroy();
    await proxy?.cleanup();
    await originServer?.close();
    await landing?.close();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  const http1: Client = (path, options = {}) => request(port, { ...options, path, headers: { host: HOST, ...options.headers } });
  const h2c: Client = (path, options = {}) => h2Request(session, { ...options, path, headers: { ':authority': HOST, ...options.headers } });
  const stat = async (name: string): Promise<number> => (await proxy.stat(name)) ?? 0;
  const originPaths = (from: number): string[] => originServer.seen.slice(from).map((seen) => seen.url);

  for (const [protocol, client] of [['HTTP/1.1', () => http1], ['h2c', () => h2c]] as const) {
    test(`${protocol}: a 302 is followed to the route its Location selects; the client sees that route's response`, async () => {
      const send = client();
      const seenBefore = landing.seen.length;
      const reply = await send('/start');
      assert.equal(reply.status, 200);
      assert.equal(reply.headers.location, undefined);
      const seen = JSON.parse(reply.body) as { upstream: string; url: string; headers: Record<string, string> };
      assert.equal(seen.upstream, 'landing');
      assert.equal(seen.url, '/landing?from=start');
      assert.equal(seen.headers.host, HOST);
      assert.equal(seen.headers['x-proxy-original-url'], `http://${HOST}/start`);
      // Sanitized once: x-forwarded-proto as the first pass set it, one request id.
      assert.equal(seen.headers['x-forwarded-proto'], 'http');
      assert.match(seen.headers['x-request-id'], /^[0-9a-f-]{36}$/);
      assert.equal(landing.seen.length - seenBefore, 1);
      // The deprecated internal_redirect_action works the same.
      assert.equal(JSON.parse((await send('/legacy')).body).url, '/landing?from=legacy');
    });

    test(`${protocol}: a redirect loop ends at max_internal_redirects, or at previous_routes; the client gets the last 302`, async () => {
      const send = client();
      let from = originServer.seen.length;
      const loop = await send('/loop');
      assert.deepEqual([loop.status, loop.headers.location, loop.body], [302, `http://${HOST}/loop`, REDIRECT_BODY]);
      // The first request and the two redirects max_internal_redirects allows.
      assert.deepEqual(originPaths(from), ['/loop', '/loop', '/loop']);
      assert.deepEqual(
        originServer.seen.slice(from).map((seen) => seen.headers['x-proxy-original-url']),
        [undefined, `http://${HOST}/loop`, `http://${HOST}/loop`],
      );
      from = originServer.seen.length;
      const visit = await send('/visit');
      assert.equal(visit.status, 302);
      // Allowed five, but the route may send the request to itself once.
      assert.deepEqual(originPaths(from), ['/visit', '/visit']);
    });

    test(`${protocol}: what is not followed passes through: another code, a body, another scheme, a relative Location`, async () => {
      const send = client();
      const landed = landing.seen.length;
      assert.equal((await send('/code307')).status, 307);
      const withBody = await send('/start', { method: 'POST', body: 'payload' });
      assert.deepEqual([withBody.status, withBody.headers.location, withBody.body], [302, `http://${HOST}/landing?from=start`, REDIRECT_BODY]);
      assert.equal((await send('/cross')).status, 302);
      assert.equal((await send('/relative')).status, 302);
      assert.equal(landing.seen.length, landed);
      // allow_cross_scheme_redirect: http may be sent on to an https Location.
      const crossed = JSON.parse((await send('/cross-allowed')).body) as { url: string; headers: Record<string, string> };
      assert.equal(crossed.url, '/landing');
      assert.equal(crossed.headers['x-proxy-original-url'], `http://${HOST}/cross-allowed`);
    });
  }

  test('HTTP/1.1 keep-alive: the next request on the connection starts with no redirect history', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const sockets = new Set<unknown>();
      const send = async (path: string): Promise<Reply> => {
        const reply = await request(port, { path, headers: { host: HOST }, agent });
        for (const list of Object.values(agent.freeSockets)) for (const socket of list ?? []) sockets.add(socket);
        return reply;
      };
      assert.equal((await send('/loop')).status, 302);
      assert.equal((await send('/start')).status, 200);
      assert.equal((await send('/loop')).status, 302);
      assert.equal(sockets.size, 1);
    } finally {
      agent.destroy();
    }
  });

  test('use_remote_address: the second pass appends the peer to x-forwarded-for once, as the first did', async () => {
    const landed = async (headers: Record<string, string>): Promise<Record<string, string>> =>
      (JSON.parse((await request(edgePort, { path: '/start', headers: { host: HOST, ...headers } })).body) as { headers: Record<string, string> }).headers;
    const direct = (JSON.parse((await request(edgePort, { path: '/landing', headers: { host: HOST } })).body) as { headers: Record<string, string> }).headers;
    const appended = direct['x-forwarded-for'];
    assert.ok(appended !== undefined && !appended.includes(','), appended);
    assert.equal((await landed({}))['x-forwarded-for'], appended);
    assert.equal((await landed({ 'x-forwarded-for': '192.0.2.7' }))['x-forwarded-for'], `192.0.2.7, ${appended}`);
  });

  test('the counters: the cluster counts redirects followed and failed, the router why each failed', async () => {
    const names = [
      'cluster.origin.upstream_internal_redirect_succeeded_total',
      'cluster.origin.upstream_internal_redirect_failed_total',
      'http.ingress_http.passthrough_internal_redirect_too_many_redirects',
      'http.ingress_http.passthrough_internal_redirect_predicate',
      'http.ingress_http.passthrough_internal_redirect_unsafe_scheme',
      'http.ingress_http.passthrough_internal_redirect_bad_location',
      'http.ingress_http.passthrough_internal_redirect_no_route',
      'http.ingress_http.downstream_rq_total',
      'http.ingress_http.downstream_rq_2xx',
      'http.ingress_http.downstream_rq_3xx',
      'cluster.origin.upstream_rq_302',
    ];
    const counts = async (): Promise<number[]> => Promise.all(names.map(stat));
    const deltas = async (run: () => Promise<unknown>): Promise<Record<string, number>> => {
      const before = await counts();
      await run();
      const after = await counts();
      return Object.fromEntries(names.map((name, i) => [name.slice(name.lastIndexOf('.') + 1), after[i] - before[i]]));
    };
    // One redirect followed: two streams in Envoy 1.16's count, one response, the 302 charged nowhere.
    assert.deepEqual(await deltas(() => http1('/start')), {
      upstream_internal_redirect_succeeded_total: 1,
      upstream_internal_redirect_failed_total: 0,
      passthrough_internal_redirect_too_many_redirects: 0,
      passthrough_internal_redirect_predicate: 0,
      passthrough_internal_redirect_unsafe_scheme: 0,
      passthrough_internal_redirect_bad_location: 0,
      passthrough_internal_redirect_no_route: 0,
      downstream_rq_total: 2,
      downstream_rq_2xx: 1,
      downstream_rq_3xx: 0,
      upstream_rq_302: 0,
    });
    const failures = await deltas(async () => {
      await http1('/loop');
      await http1('/visit');
      await http1('/cross');
      await http1('/relative');
      await http1('/start', { method: 'POST', body: 'payload' });
    });
    assert.deepEqual(
      [failures.upstream_internal_redirect_succeeded_total, failures.upstream_internal_redirect_failed_total, failures.upstream_rq_302, failures.downstream_rq_3xx],
      [3, 5, 5, 5],
    );
    assert.deepEqual(
      [
        failures.passthrough_internal_redirect_too_many_redirects,
        failures.passthrough_internal_redirect_predicate,
        failures.passthrough_internal_redirect_unsafe_scheme,
        failures.passthrough_internal_redirect_bad_location,
        failures.passthrough_internal_redirect_no_route,
      ],
      [1, 1, 1, 1, 0],
    );
  });

  test("the drained redirect's upstream connection serves the next request", async () => {
    await http1('/loop');
    const opened = await stat('cluster.origin.upstream_cx_total');
    const closed = await stat('cluster.origin.upstream_cx_destroy');
    for (let i = 0; i < 3; i++) assert.equal((await http1('/loop')).status, 302);
    assert.equal(await stat('cluster.origin.upstream_cx_total'), opened);
    assert.equal(await stat('cluster.origin.upstream_cx_destroy'), closed);
  });

  test("the access log has Envoy 1.16's two lines for a followed redirect: the stream replaced, then the final one", async () => {
    // Every stream, replaced ones included, writes one line: the log is complete once it has as many.
    const complete = async (): Promise<string[]> => {
      for (let i = 0; i < 400; i++) {
        const lines = fs.existsSync(logPath) ? fs.readFileSync(logPath, 'utf8').split('\n').slice(0, -1) : [];
        if (lines.length === (await stat('http.ingress_http.downstream_rq_total'))) return lines;
        await sleep(25);
      }
      throw new Error('the access log never caught up with downstream_rq_total');
    };
    const before = (await complete()).length;
    await http1('/start');
    assert.deepEqual((await complete()).slice(before), ['- 0 internal_redirect origin start -', `/landing?from=start 200 via_upstream landing landing http://${HOST}/start`]);
  });
});
