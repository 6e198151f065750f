// Routes chosen by the downstream's client certificate (tls_context: presented, validated),
// through the real binary over HTTP/1.1 and HTTP/2 over TLS, with and without a certificate.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http2 from 'node:http2';
import * as https from 'node:https';
import { after, before, describe, test } from 'node:test';
import { httpListener, withDownstreamTls } from '../helpers/config_fixtures';
import { type CertificateFiles, makeCa, makeLeaf } from '../helpers/certificates';
import { makeTempDir, type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
const answer = (body: string) => ({ status: 200, body: { inline_string: body } });
const ROUTES = [
  { match: { prefix: '/', tls_context: { validated: true } }, direct_response: answer('validated') },
  { match: { prefix: '/', tls_context: { presented: false } }, direct_response: answer('anonymous') },
  { match: { prefix: '/' }, direct_response: answer('other') },
];

interface ClientTls {
  readonly ca: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
}

function http1(port: number, tls: ClientTls): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: '/', servername: 'proxy.example', agent: false, timeout: 5000, ...tls }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve(body));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

function h2(port: number, tls: ClientTls): Promise<string> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { servername: 'proxy.example', ...tls });
    session.on('error', reject);
    const stream = session.request({ ':path': '/' });
    let body = '';
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => (body += c));
    stream.on('end', () => {
      session.close();
      resolve(body);
    });
    stream.on('error', reject);
    stream.end();
  });
}

describe('tls_context route matches over TLS', TIMEOUT, () => {
  let dir: string;
  let proxy: RunningProxy;
  let port: number;
  let ca: CertificateFiles;
  let client: CertificateFiles;

  before(async () => {
    dir = makeTempDir();
    ca = makeCa(dir, 'ca', 30);
    const server = makeLeaf(dir, ca, 'server', 'DNS:proxy.example', 30);
    client = makeLeaf(dir, ca, 'client', 'URI:spiffe://example/client', 30);
    const listener = withDownstreamTls(httpListener('tls', 0, ROUTES), server, ['h2', 'http/1.1']);
    // A certificate is asked for and checked against the CA, but not required.
    listener.filter_chains[0].transport_socket.typed_config.common_tls_context.validation_context = { trusted_ca: { filename: ca.cert } };
    proxy = await startProxy({ static_resources: { listeners: [listener] } });
    port = await proxy.listenerPort('tls');
  });

  after(async () => {
    await proxy?.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const [protocol, send] of [['HTTP/1.1', http1], ['h2', h2]] as const) {
    test(`${protocol}: a validated client certificate, and none`, async () => {
      const trust = { ca: fs.readFileSync(ca.cert) };
      assert.equal(await send(port, { ...trust, cert: fs.readFileSync(client.cert), key: fs.readFileSync(client.key) }), 'validated');
      assert.equal(await send(port, trust), 'anonymous');
    });
  }
});
