// Where a route sends a request, through the real binary over HTTP/1.1 and h2c alike: a cluster
// named by a request header (and the status when there is no such cluster), weighted clusters
// splitting the traffic, the upstream authority from a request header, the chosen host's name or
// the path, and the path by a regex.

import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { h2Request, request, startUpstream, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };

interface Answer {
  readonly status: number;
  readonly body: string;
}

type Client = (path: string, headers?: Record<string, string>) => Promise<Answer>;

const ROUTES = [
  { match: { prefix: '/by-header-404' }, route: { cluster_header: 'x-cluster', cluster_not_found_response_code: 'NOT_FOUND' } },
  { match: { prefix: '/by-header' }, route: { cluster_header: 'x-cluster' } },
  { match: { prefix: '/host-header' }, route: { cluster: 'a', host_rewrite_header: 'x-upstream-host' } },
  { match: { prefix: '/auto' }, route: { cluster: 'a', auto_host_rewrite: true } },
  { match: { prefix: '/split' }, route: { weighted_clusters: { clusters: [{ name: 'a', weight: 30 }, { name: 'b', weight: 70 }] } } },
  // Envoy's documented examples.
  { match: { prefix: '/service/' }, route: { cluster: 'c', regex_rewrite: { pattern: { google_re2: {}, regex: '^/service/([^/]+)(/.*)$' }, substitution: '\\2/instance/\\1' } } },
  { match: { prefix: '/every/' }, route: { cluster: 'c', regex_rewrite: { pattern: { google_re2: {}, regex: 'one' }, substitution: 'two' } } },
  { match: { prefix: '/hosts/' }, route: { cluster: 'c', host_rewrite_path_regex: { pattern: { google_re2: {}, regex: '^/hosts/([^/]+)/.+$' }, substitution: '\\1.internal' } } },
];

/** Cluster `name` whose one endpoint at `port` is named `hostname`. */
function namedCluster(name: string, port: number, hostname: string): object {
  const cluster = localCluster(name, port) as { load_assignment: { endpoints: { lb_endpoints: { endpoint: Record<string, unknown> }[] }[] } };
  cluster.load_assignment.endpoints[0]!.lb_endpoints[0]!.endpoint.hostname = hostname;
  return cluster;
}

describe('route targets on HTTP/1.1 and h2c', TIMEOUT, () => {
  let a: Upstream;
  let b: Upstream;
  let c: Upstream;
  let proxy: RunningProxy;
  let port: number;
  let session: http2.ClientHttp2Session;

  before(async () => {
    // Each upstream answers with its name and the authority it was sent.
    a = await startUpstream('a', (req, res) => res.end(`a ${req.headers.host}`));
    b = await startUpstream('b', (req, res) => res.end(`b ${req.headers.host}`));
    c = await startUpstream('c', (req, res) => res.end(`c ${req.headers.host} ${req.url} ${req.headers['x-proxy-original-path'] ?? '-'}`));
    proxy = await startProxy({
      static_resources: { listeners: [httpListener('targets', 0, ROUTES)], clusters: [namedCluster('a', a.port, 'a.backend.internal'), localCluster('b', b.port), localCluster('c', c.port)] },
    });
    port = await proxy.listenerPort('targets');
    session = http2.connect(`http://127.0.0.1:${port}`);
  });

  after(async () => {
    session?.destroy();
    await proxy?.cleanup();
    await a?.close();
    await b?.close();
    await c?.close();
  });

  const http1: Client = async (path, headers = {}) => {
    const { status, body } = await request(port, { path, headers: { host: 'front.example', ...headers } });
    return { status, body };
  };
  const h2c: Client = async (path, headers = {}) => {
    const { status, body } = await h2Request(session, { path, headers: { ':authority': 'front.example', ...headers } });
    return { status, body };
  };

  for (const [protocol, client] of [['HTTP/1.1', () => http1], ['h2c', () => h2c]] as const) {
    test(`${protocol}: weighted clusters split the traffic by weight`, async () => {
      const send = client();
      const n = 400;
      const answers: Answer[] = [];
      // Fifty at a time: enough to be quick, few enough to stay within any stream or socket limit.
      for (let i = 0; i < n; i += 50) answers.push(...(await Promise.all(Array.from({ length: 50 }, (_, j) => send(`/split/${i + j}`)))));
      const toA = answers.filter((answer) => answer.body.startsWith('a ')).length;
      assert.equal(answers.filter((answer) => answer.body.startsWith('b ')).length, n - toA);
      // 30% of 400 is 120 with a standard deviation of 9.2: five of them either way fails once in
      // millions of runs, and a split that ignores the weights (200, or all to one) fails always.
      assert.ok(toA > 74 && toA < 166, `${toA} of ${n} to the 30% cluster`);
    });

    test(`${protocol}: the cluster from a header, the authority from a header or the host's name`, async () => {
      const send = client();
      const cases: [string, Record<string, string>, Answer][] = [
        ['/by-header', { 'x-cluster': 'b' }, { status: 200, body: 'b front.example' }],
        ['/by-header', { 'x-cluster': 'a' }, { status: 200, body: 'a front.example' }],
        ['/by-header', { 'x-cluster': 'nowhere' }, { status: 503, body: '' }],
        ['/by-header', {}, { status: 503, body: '' }],
        ['/by-header-404', { 'x-cluster': 'nowhere' }, { status: 404, body: '' }],
        ['/host-header', { 'x-upstream-host': 'rewritten.example' }, { status: 200, body: 'a rewritten.example' }],
        ['/host-header', {}, { status: 200, body: 'a front.example' }],
        ['/auto', {}, { status: 200, body: 'a a.backend.internal' }],
        ['/service/foo/v1/api?x=1', {}, { status: 200, body: 'c front.example /v1/api/instance/foo?x=1 /service/foo/v1/api?x=1' }],
        ['/every/one/two/one', {}, { status: 200, body: 'c front.example /every/two/two/two /every/one/two/one' }],
        ['/hosts/billing/list?all', {}, { status: 200, body: 'c billing.internal /hosts/billing/list?all -' }],
        // A pattern that does not match leaves its input: the host is the path, as in Envoy.
        ['/hosts/billing', {}, { status: 200, body: 'c /hosts/billing /hosts/billing -' }],
      ];
      for (const [path, headers, expected] of cases) assert.deepEqual(await send(path, headers), expected, `${path} ${JSON.stringify(headers)}`);
    });
  }
});
