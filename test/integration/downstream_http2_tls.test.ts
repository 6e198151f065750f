// HTTP/2 over TLS through the real binary: a listener whose DownstreamTlsContext offers ALPN h2
// and http/1.1 serves curl --http2, node:http2, h2load and a client that sends the preface
// without ALPN; initial_connection_window_size reaches the client as a WINDOW_UPDATE; and none
// of it restarts a worker.

import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http2 from 'node:http2';
import * as https from 'node:https';
import * as tls from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { type CertificateFiles, makeCa, makeLeaf } from '../helpers/certificates';
import { httpListener, localCluster, withDownstreamTls } from '../helpers/config_fixtures';
import { startUpstream, type Upstream } from '../helpers/http_peers';
import { makeTempDir, type RunningProxy, startProxy } from '../helpers/proxy_process';

const SERVER_NAME = 'h2.example';
const TIMEOUT = { timeout: 60_000 };
const installed = (tool: string): boolean => spawnSync(tool, ['--version']).status === 0;
/** scripts/install-test-deps.sh installs both; without them those cases are skipped. */
const WITH_CURL = { skip: installed('curl') ? false : 'curl (Debian curl) is not installed' };
const WITH_H2LOAD = { skip: installed('h2load') ? false : 'h2load (Debian nghttp2-client) is not installed' };

/** A listener `name` terminating TLS with `cert`, ALPN h2 then http/1.1, with `options` in its connection manager. */
function tlsListener(name: string, cert: CertificateFiles, options: Record<string, unknown> = {}): Record<string, unknown> {
  return withDownstreamTls(httpListener(name, 0, [{ match: { prefix: '/' }, route: { cluster: 'web' } }], options), cert, ['h2', 'http/1.1']);
}

interface H2Reply {
  readonly status: number;
  readonly body: string;
  readonly alpn: string | false;
  /** The client's view of the connection window the proxy gave it. */
  readonly remoteWindowSize: number;
}

/** One GET over a new HTTP/2 session on `socket` (or a TLS connection with ALPN h2), bounded in time. */
function h2Get(port: number, ca: Buffer, socket?: () => tls.TLSSocket): Promise<H2Reply> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { ca, servername: SERVER_NAME, ...(socket === undefined ? {} : { createConnection: socket }) });
    const timer = setTimeout(() => {
      session.destroy();
      reject(new Error('no response in 5 s'));
    }, 5000);
    session.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    let alpn: string | false = false;
    session.on('connect', () => (alpn = (session.socket as tls.TLSSocket).alpnProtocol ?? false));
    const stream = session.request({ ':path': '/h2' });
    let status = 0;
    let body = '';
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => (body += c));
    stream.on('end', () => {
      clearTimeout(timer);
      if (status === 0) {
        session.destroy();
        reject(new Error('the stream ended without a response'));
        return;
      }
      const remoteWindowSize = session.state.remoteWindowSize ?? 0;
      session.close();
      resolve({ status, body, alpn, remoteWindowSize });
    });
    stream.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

function run(tool: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(tool, [...args], { timeout: 30_000 }, (error, stdout, stderr) => (error === null ? resolve(stdout) : reject(new Error(`${tool}: ${error.message}\n${stderr}`))));
  });
}

describe('HTTP/2 over TLS through the proxy binary', TIMEOUT, () => {
  let dir: string;
  let ca: CertificateFiles;
  let caPem: Buffer;
  let upstream: Upstream;
  let proxy: RunningProxy;
  let port: number;
  let smallWindowPort: number;
  let largeWindowPort: number;

  before(async () => {
    dir = makeTempDir();
    ca = makeCa(dir, 'ca', 2);
    caPem = fs.readFileSync(ca.cert);
    const cert = makeLeaf(dir, ca, 'server', `DNS:${SERVER_NAME}`, 2);
    upstream = await startUpstream('web', (_req, res) => res.end('from upstream'));
    proxy = await startProxy({
      static_resources: {
        listeners: [
          // Envoy's default initial_connection_window_size (256 MiB), then the two ends of the range.
          tlsListener('h2_tls', cert),
          tlsListener('small_window', cert, { http2_protocol_options: { initial_connection_window_size: 65535 } }),
          tlsListener('large_window', cert, { http2_protocol_options: { initial_connection_window_size: 1048576 } }),
        ],
        clusters: [localCluster('web', upstream.port)],
      },
    });
    port = await proxy.listenerPort('h2_tls');
    smallWindowPort = await proxy.listenerPort('small_window');
    largeWindowPort = await proxy.listenerPort('large_window');
  });

  after(async () => {
    await proxy?.cleanup();
    await upstream?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('node:http2 with ALPN h2 gets its response, with the default connection window', async () => {
    const reply = await h2Get(port, caPem);
    assert.deepEqual([reply.status, reply.body, reply.alpn], [200, 'from upstream', 'h2']);
    assert.equal(reply.remoteWindowSize, 268435456);
    assert.equal(await proxy.stat('server.worker_restarts'), 0);
  });

  test('initial_connection_window_size: 65535 (no WINDOW_UPDATE) starts the session too; 1 MiB is what the client gets', async () => {
    assert.equal((await h2Get(smallWindowPort, caPem)).remoteWindowSize, 65535);
    assert.equal((await h2Get(largeWindowPort, caPem)).remoteWindowSize, 1048576);
    assert.equal(await proxy.stat('server.worker_restarts'), 0);
  });

  test('a TLS client without ALPN that opens with the HTTP/2 preface is served HTTP/2 (codec AUTO)', async () => {
    const noAlpn = (): tls.TLSSocket => tls.connect({ host: '127.0.0.1', port, ca: caPem, servername: SERVER_NAME });
    const reply = await h2Get(port, caPem, noAlpn);
    assert.deepEqual([reply.status, reply.body, reply.alpn], [200, 'from upstream', false]);
    assert.equal(await proxy.stat('server.worker_restarts'), 0);
  });

  test('HTTP/1.1 over the same listener still works (ALPN http/1.1)', async () => {
    const reply = await new Promise<{ status: number; alpn: string | false }>((resolve, reject) => {
      const options = { host: '127.0.0.1', port, path: '/', ca: caPem, servername: SERVER_NAME, ALPNProtocols: ['http/1.1'], agent: false, timeout: 5000 };
      const req = https.get(options, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, alpn: (res.socket as tls.TLSSocket).alpnProtocol ?? false }));
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
    });
    assert.deepEqual(reply, { status: 200, alpn: 'http/1.1' });
  });

  test('curl --http2 negotiates h2 and gets the response', WITH_CURL, async () => {
    const out = await run('curl', [
      '--silent', '--show-error', '--http2', '--max-time', '10', '--cacert', ca.cert,
      '--resolve', `${SERVER_NAME}:${port}:127.0.0.1`, '--write-out', '\n%{http_version} %{http_code}', `https://${SERVER_NAME}:${port}/curl`,
    ]);
    assert.equal(out, 'from upstream\n2 200');
    assert.equal(await proxy.stat('server.worker_restarts'), 0);
  });

  test('h2load over TLS: every request succeeds, no worker restarts', WITH_H2LOAD, async () => {
    const out = await run('h2load', ['-n', '200', '-c', '4', '-m', '10', `https://127.0.0.1:${port}/`]);
    assert.match(out, /Application protocol: h2/);
    assert.match(out, /requests: 200 total, 200 started, 200 done, 200 succeeded, 0 failed/);
    assert.equal(await proxy.stat('server.worker_restarts'), 0);
  });
});
