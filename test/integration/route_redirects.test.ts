// Redirect and direct response routes through the real binary, over HTTP/1.1 and h2c alike: the
// status, the Location built from the request and the redirect's parts, the body (a file's, for
// one), and the router's direct response count.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { httpListener } from '../helpers/config_fixtures';
import { h2Request, type Reply, request } from '../helpers/http_peers';
import { makeTempDir, type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };

interface Answer {
  readonly status: number;
  readonly location: string | undefined;
  readonly body: string;
}

type Client = (path: string, headers?: Record<string, string>) => Promise<Answer>;

const answer = async (reply: Promise<Reply>): Promise<Answer> => {
  const { status, headers, body } = await reply;
  return { status, location: headers.location, body };
};

const MAINTENANCE = '<p>back soon</p>\n';

const routes = (bodyFile: string): object[] => [
  { match: { prefix: '/old' }, redirect: { path_redirect: '/new' } },
  { match: { prefix: '/secure/' }, redirect: { https_redirect: true, prefix_rewrite: '/s/', strip_query: true } },
  { match: { path: '/moved' }, redirect: { host_redirect: 'elsewhere.example', port_redirect: 8443, scheme_redirect: 'https', response_code: 'PERMANENT_REDIRECT' } },
  { match: { safe_regex: { google_re2: {}, regex: '/found/[a-z]+' } }, redirect: { prefix_rewrite: '/target', response_code: 'FOUND' } },
  { match: { prefix: '/see' }, direct_response: { status: 303 } },
  { match: { prefix: '/maintenance' }, direct_response: { status: 503, body: { filename: bodyFile } } },
];

describe('redirects and direct responses on HTTP/1.1 and h2c', TIMEOUT, () => {
  let dir: string;
  let proxy: RunningProxy;
  let port: number;
  let session: http2.ClientHttp2Session;

  before(async () => {
    dir = makeTempDir();
    const bodyFile = path.join(dir, 'maintenance.html');
    fs.writeFileSync(bodyFile, MAINTENANCE);
    const listener = httpListener('redirects', 0, routes(bodyFile));
    // A virtual host that takes plaintext requests only to send them to https.
    listener.filter_chains[0].filters[0].typed_config.route_config.virtual_hosts.unshift({
      name: 'secure',
      domains: ['secure.example:8080'],
      require_tls: 'ALL',
      routes: [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'secure' } } }],
    });
    proxy = await startProxy({ static_resources: { listeners: [listener] } });
    port = await proxy.listenerPort('redirects');
    session = http2.connect(`http://127.0.0.1:${port}`);
  });

  after(async () => {
    session?.destroy();
    await proxy?.cleanup();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  const http1: Client = (path, headers = {}) => answer(request(port, { path, headers: { host: 'site.example:8080', ...headers } }));
  const h2c: Client = (path, headers = {}) => answer(h2Request(session, { path, headers: { ':authority': 'site.example:8080', ...headers } }));

  for (const [protocol, client] of [['HTTP/1.1', () => http1], ['h2c', () => h2c]] as const) {
    test(`${protocol}: status, Location and body from the route`, async () => {
      const send = client();
      const before = (await proxy.stat('http.ingress_http.rq_direct_response')) ?? 0;
      const cases: [string, Record<string, string>, Answer][] = [
        ['/old/page?x=1', {}, { status: 301, location: 'http://site.example:8080/new?x=1', body: '' }],
        ['/old', { 'x-forwarded-proto': 'https' }, { status: 301, location: 'https://site.example:8080/new', body: '' }],
        ['/secure/area?token=1', {}, { status: 301, location: 'https://site.example:8080/s/area', body: '' }],
        ['/moved?a', {}, { status: 308, location: 'https://elsewhere.example:8443/moved?a', body: '' }],
        ['/found/abc?z=9', {}, { status: 302, location: 'http://site.example:8080/target?z=9', body: '' }],
        ['/see/other', {}, { status: 303, location: 'http://site.example:8080/see/other', body: '' }],
        ['/maintenance', {}, { status: 503, location: undefined, body: MAINTENANCE }],
      ];
      for (const [path, headers, expected] of cases) assert.deepEqual(await send(path, headers), expected, path);
      // require_tls ALL: the request's own URL over https, unless it came over https.
      const header: Record<string, string> = protocol === 'h2c' ? { ':authority': 'secure.example:8080' } : { host: 'secure.example:8080' };
      assert.deepEqual(await send('/a?b=1', header), { status: 301, location: 'https://secure.example:8080/a?b=1', body: '' });
      assert.deepEqual(await send('/a', { ...header, 'x-forwarded-proto': 'https' }), { status: 200, location: undefined, body: 'secure' });
      assert.equal(((await proxy.stat('http.ingress_http.rq_direct_response')) ?? 0) - before, cases.length + 2);
    });
  }
});
