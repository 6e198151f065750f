// One HTTP layer for every protocol: the same requests over HTTP/1.1, h2c and h2 over TLS, to one
// listener whose connection manager runs the health_check filter, the router and a file access
// log, get the same responses, move the same statistics and write the same access-log lines
// (PROTOCOL aside).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type CertificateFiles, makeCa, makeLeaf } from '../helpers/certificates';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { startUpstream, type Upstream } from '../helpers/http_peers';
import { makeTempDir, type RunningProxy, sleep, startProxy } from '../helpers/proxy_process';

const SERVER_NAME = 'parity.example';
const TIMEOUT = { timeout: 60_000 };
const TLS_INSPECTOR = 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector';
const DOWNSTREAM_TLS = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
const HEALTH_CHECK = 'type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck';
const ROUTER = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';
const FILE_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';
const FORMAT = '%REQ(:METHOD)% %REQ(:PATH)% %PROTOCOL% %RESPONSE_CODE% %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %UPSTREAM_CLUSTER% %RESPONSE_CODE_DETAILS% %REQ(X-CASE)%\n';
const STATS = [
  'http.ingress_http.downstream_rq_2xx',
  'http.ingress_http.downstream_rq_4xx',
  'http.ingress_http.downstream_rq_5xx',
  'http.ingress_http.downstream_rq_completed',
  'http.ingress_http.no_route',
  'http.ingress_http.rq_direct_response',
  'cluster.web.upstream_rq_200',
  'cluster.web.upstream_rq_total',
];

interface Exchange {
  readonly method: string;
  readonly path: string;
  readonly body?: string;
}

/** Each kind of answer once: the health check filter's, the upstream's (GET, POST), a direct response, no route. */
const EXCHANGES: readonly Exchange[] = [
  { method: 'GET', path: '/healthz' },
  { method: 'GET', path: '/web/a' },
  { method: 'POST', path: '/web/b', body: 'request body' },
  { method: 'GET', path: '/direct' },
  { method: 'GET', path: '/nowhere' },
];

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly server: string;
}

type Client = (exchange: Exchange, tag: string) => Promise<Answer>;

function http1Client(port: number): Client {
  const agent = new http.Agent({ keepAlive: true });
  return (exchange, tag) =>
    new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: exchange.method, path: exchange.path, agent, headers: { host: SERVER_NAME, 'x-case': tag } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, server: String(res.headers.server) }));
      });
      req.on('error', reject);
      req.end(exchange.body);
    });
}

function http2Client(session: http2.ClientHttp2Session): Client {
  return (exchange, tag) =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ':method': exchange.method, ':path': exchange.path, ':authority': SERVER_NAME, 'x-case': tag });
      let status = 0;
      let server = '';
      let body = '';
      stream.on('response', (headers) => {
        status = Number(headers[':status']);
        server = String(headers.server);
      });
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => (body += c));
      stream.on('end', () => resolve({ status, body, server }));
      stream.on('error', reject);
      stream.end(exchange.body);
    });
}

/** The connection manager every chain of the listener runs. */
function connectionManager(logPath: string): Record<string, unknown> {
  const listener = httpListener('parity', 0, [
    { match: { prefix: '/web' }, route: { cluster: 'web' } },
    { match: { prefix: '/direct' }, direct_response: { status: 201, body: { inline_string: 'direct' } } },
  ]) as { filter_chains: { filters: { typed_config: Record<string, unknown> }[] }[] };
  const hcm = listener.filter_chains[0].filters[0];
  hcm.typed_config.http_filters = [
    { name: 'envoy.filters.http.health_check', typed_config: { '@type': HEALTH_CHECK, pass_through_mode: false, headers: [{ name: ':path', exact_match: '/healthz' }] } },
    { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER } },
  ];
  hcm.typed_config.access_log = [{ name: 'envoy.access_loggers.file', typed_config: { '@type': FILE_LOG, path: logPath, format: FORMAT } }];
  return hcm;
}

describe('the same requests over HTTP/1.1, h2c and h2 over TLS', TIMEOUT, () => {
  let dir: string;
  let ca: CertificateFiles;
  let upstream: Upstream;
  let proxy: RunningProxy;
  let logPath: string;
  let port: number;
  const sessions: http2.ClientHttp2Session[] = [];

  before(async () => {
    dir = makeTempDir();
    ca = makeCa(dir, 'ca', 2);
    const cert = makeLeaf(dir, ca, 'server', `DNS:${SERVER_NAME}`, 2);
    logPath = path.join(dir, 'access.log');
    upstream = await startUpstream('web', (_req, res, body) => res.end(`upstream saw ${body.length} bytes`));
    const hcm = connectionManager(logPath);
    const tls = {
      name: 'envoy.transport_sockets.tls',
      typed_config: {
        '@type': DOWNSTREAM_TLS,
        common_tls_context: { tls_certificates: [{ certificate_chain: { filename: cert.cert }, private_key: { filename: cert.key } }], alpn_protocols: ['h2', 'http/1.1'] },
      },
    };
    proxy = await startProxy(
      {
        static_resources: {
          listeners: [
            {
              name: 'parity',
              address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
              listener_filters: [{ name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': TLS_INSPECTOR } }],
              filter_chains: [
                { filter_chain_match: { transport_protocol: 'tls' }, filters: [hcm], transport_socket: tls },
                { filters: [hcm] },
              ],
            },
          ],
          clusters: [localCluster('web', upstream.port)],
        },
      },
      ['--file-flush-interval-msec', '50'],
    );
    port = await proxy.listenerPort('parity');
  });

  after(async () => {
    for (const session of sessions) session.destroy();
    await proxy?.cleanup();
    await upstream?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function statValues(): Promise<number[]> {
    return Promise.all(STATS.map(async (name) => (await proxy.stat(name)) ?? 0));
  }

  /** Every exchange through `client`: the answers, the statistics moved, and the access-log lines written. */
  async function run(client: Client, tag: string): Promise<{ answers: Answer[]; moved: number[]; lines: string[] }> {
    const before = await statValues();
    const answers: Answer[] = [];
    for (const exchange of EXCHANGES) answers.push(await client(exchange, tag));
    const lines = await waitForLines(tag, EXCHANGES.length);
    const after = await statValues();
    return { answers, moved: after.map((value, i) => value - before[i]), lines };
  }

  async function waitForLines(tag: string, count: number): Promise<string[]> {
    for (let i = 0; i < 100; i++) {
      const lines = (fs.existsSync(logPath) ? fs.readFileSync(logPath, 'utf8') : '').split('\n').filter((line) => line.endsWith(` ${tag}`));
      if (lines.length >= count) return lines;
      await sleep(50);
    }
    throw new Error(`fewer than ${count} access-log lines for ${tag}`);
  }

  test('same responses, same statistics, same access-log lines but for PROTOCOL', async () => {
    const h2c = http2.connect(`http://127.0.0.1:${port}`);
    const h2 = http2.connect(`https://127.0.0.1:${port}`, { ca: fs.readFileSync(ca.cert), servername: SERVER_NAME });
    sessions.push(h2c, h2);
    const runs = [
      { protocol: 'HTTP/1.1', ...(await run(http1Client(port), 'http1')) },
      { protocol: 'HTTP/2', ...(await run(http2Client(h2c), 'h2c')) },
      { protocol: 'HTTP/2', ...(await run(http2Client(h2), 'h2')) },
    ];
    const [first, ...rest] = runs;
    assert.deepEqual(
      first.answers.map((a) => [a.status, a.body, a.server]),
      [
        [200, '', 'proxy'],
        [200, 'upstream saw 0 bytes', 'proxy'],
        [200, 'upstream saw 12 bytes', 'proxy'],
        [201, 'direct', 'proxy'],
        [404, '', 'proxy'],
      ],
    );
    assert.deepEqual(first.moved, [4, 1, 0, 5, 1, 1, 2, 2]);
    assert.deepEqual(first.lines, [
      'GET /healthz HTTP/1.1 200 - 0 0 - health_check_ok http1',
      'GET /web/a HTTP/1.1 200 - 0 20 web via_upstream http1',
      'POST /web/b HTTP/1.1 200 - 12 21 web via_upstream http1',
      'GET /direct HTTP/1.1 201 - 0 6 - direct_response http1',
      'GET /nowhere HTTP/1.1 404 NR 0 0 - route_not_found http1',
    ]);
    const neutral = (run: (typeof runs)[number]): string[] => run.lines.map((line) => line.replace(` ${run.protocol} `, ' PROTOCOL ').replace(/ \w+$/, ''));
    for (const other of rest) {
      assert.deepEqual(other.answers, first.answers);
      assert.deepEqual(other.moved, first.moved);
      assert.deepEqual(neutral(other), neutral(first));
    }
    assert.equal(await proxy.stat('server.worker_restarts'), 0);
  });
});
