// Upstream TLS served by the real proxy against real TLS servers, with certificates the test
// makes: SNI, verification against trusted_ca, SAN matching, client certificates,
// transport_socket_matches (one cluster, mTLS to the endpoints that advertise it and plaintext
// to the others), auto_sni and auto_san_validation, renegotiation, the deprecated tls_context,
// raw_buffer, and tcp_proxy over TLS. Each server records what its connections carried.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { test, type TestContext } from 'node:test';
import * as tls from 'node:tls';
import { httpListener } from '../helpers/config_fixtures';
import { closeServer, listen } from '../helpers/http_peers';
import { request, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { type KeyPair, TestPki } from '../helpers/test_pki';

const TIMEOUT = { timeout: 90_000 };
const TLS_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';
const TCP_PROXY_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';

/** What an upstream saw of one connection. */
interface SeenConnection {
  readonly tls: boolean;
  readonly servername: string | null;
  /** The client certificate's CN, or null without one. */
  readonly clientCn: string | null;
}

interface RecordingServer {
  readonly port: number;
  readonly seen: SeenConnection[];
}

function seenOf(socket: net.Socket): SeenConnection {
  if (!(socket instanceof tls.TLSSocket)) return { tls: false, servername: null, clientCn: null };
  const peer = socket.getPeerX509Certificate();
  const cn = peer === undefined ? null : (/CN=([^\n]+)/.exec(peer.subject)?.[1] ?? '');
  return { tls: true, servername: typeof socket.servername === 'string' ? socket.servername : null, clientCn: cn };
}

/** An HTTP server, over TLS when `options` are given, recording each connection and answering 200. */
async function recordingServer(t: TestContext, options: https.ServerOptions | null, onRequest?: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<RecordingServer> {
  const seen: SeenConnection[] = [];
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (onRequest !== undefined) return onRequest(req, res);
    res.end('ok');
  };
  const server = options === null ? http.createServer(handler) : https.createServer(options, handler);
  server.on(options === null ? 'connection' : 'secureConnection', (socket: net.Socket) => seen.push(seenOf(socket)));
  server.on('tlsClientError', () => undefined);
  await listen(server);
  t.after(() => {
    server.closeAllConnections();
    return closeServer(server);
  });
  return { port: (server.address() as net.AddressInfo).port, seen };
}

function endpoint(port: number, metadata?: Record<string, unknown>): Record<string, unknown> {
  return { endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } }, ...(metadata === undefined ? {} : { metadata: { filter_metadata: metadata } }) };
}

function cluster(name: string, endpoints: Record<string, unknown>[], fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, type: 'STATIC', connect_timeout: '2s', load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: endpoints }] }, ...fields };
}

function tlsSocket(context: Record<string, unknown>): Record<string, unknown> {
  return { name: 'envoy.transport_sockets.tls', typed_config: { '@type': TLS_TYPE, ...context } };
}

function inline(pem: Buffer): Record<string, unknown> {
  return { inline_string: pem.toString('utf8') };
}

function clientCertificate(pair: KeyPair): Record<string, unknown> {
  return { certificate_chain: { filename: pair.certPath }, private_key: inline(pair.key) };
}

async function get(proxy: RunningProxy, path: string, host = 'localhost'): Promise<number> {
  const port = await proxy.listenerPort('in');
  return (await request(`http://127.0.0.1:${port}${path}`, { headers: { host, connection: 'close' } })).status;
}

/** The number of lines of the proxy's log that hold `text`. */
function logLines(proxy: RunningProxy, text: string): number {
  return proxy.stderr.split('\n').filter((line) => line.includes(text)).length;
}

interface Pki {
  readonly ca: KeyPair;
  readonly otherCa: KeyPair;
  readonly server: KeyPair;
  readonly strangerServer: KeyPair;
  readonly client: KeyPair;
}

function makePki(t: TestContext): Pki {
  const pki = new TestPki();
  t.after(() => pki.cleanup());
  const ca = pki.ca('test-ca');
  const otherCa = pki.ca('other-ca');
  return {
    ca,
    otherCa,
    server: pki.leaf('backend', ca, ['DNS:backend.test', 'DNS:*.wild.test', 'IP:127.0.0.1']),
    strangerServer: pki.leaf('stranger', otherCa, ['DNS:backend.test']),
    client: pki.leaf('proxy-client', ca, ['URI:spiffe://test/proxy']),
  };
}

test('upstream TLS: SNI, trusted_ca, SANs, client certificates, raw_buffer and the failures counted and logged once per host', TIMEOUT, async (t) => {
  const pki = makePki(t);
  const serverTls = { key: pki.server.key, cert: pki.server.cert, requestCert: true, rejectUnauthorized: false, ca: pki.ca.cert };
  const backend = await recordingServer(t, serverTls);
  const stranger = await recordingServer(t, { key: pki.strangerServer.key, cert: pki.strangerServer.cert });
  const plain = await recordingServer(t, null);
  const validation = { trusted_ca: { filename: pki.ca.certPath }, match_subject_alt_names: [{ exact: 'backend.test' }] };
  const routes = ['verified', 'wrong_ca', 'wrong_san', 'raw', 'auto_sni', 'pinned'].map((name) => ({ match: { prefix: `/${name}` }, route: { cluster: name } }));
  const proxy = await startProxy({
    static_resources: {
      listeners: [httpListener('in', 0, routes)],
      clusters: [
        cluster('verified', [endpoint(backend.port)], {
          transport_socket: tlsSocket({ sni: 'backend.test', common_tls_context: { validation_context: validation, tls_certificates: [clientCertificate(pki.client)] } }),
        }),
        cluster('wrong_ca', [endpoint(stranger.port)], { transport_socket: tlsSocket({ sni: 'backend.test', common_tls_context: { validation_context: validation } }) }),
        cluster('wrong_san', [endpoint(backend.port)], {
          transport_socket: tlsSocket({ common_tls_context: { validation_context: { trusted_ca: inline(pki.ca.cert), match_subject_alt_names: [{ exact: 'other.test' }] } } }),
        }),
        cluster('raw', [endpoint(plain.port)], { transport_socket: { name: 'envoy.transport_sockets.raw_buffer' } }),
        cluster('auto_sni', [endpoint(backend.port)], {
          upstream_http_protocol_options: { auto_sni: true, auto_san_validation: true },
          transport_socket: tlsSocket({ common_tls_context: { validation_context: { trusted_ca: inline(pki.ca.cert) } } }),
        }),
        cluster('pinned', [endpoint(backend.port)], {
          transport_socket: tlsSocket({ common_tls_context: { validation_context: { verify_certificate_hash: ['00'.repeat(32)] } } }),
        }),
      ],
    },
  });
  t.after(() => proxy.cleanup());

  // SNI sent, the server verified against trusted_ca and its SAN, the client certificate presented.
  assert.equal(await get(proxy, '/verified'), 200);
  assert.deepEqual(backend.seen, [{ tls: true, servername: 'backend.test', clientCn: 'proxy-client' }]);
  assert.equal(await proxy.stat('cluster.verified.ssl.handshake'), 1);
  assert.equal(await proxy.stat('cluster.verified.ssl.versions.TLSv1.2'), 1);
  assert.equal(await proxy.stat('cluster.verified.ssl.connection_error'), 0);

  // A server certificate from another CA: refused, counted, and logged once for the host.
  assert.equal(await get(proxy, '/wrong_ca'), 503);
  assert.equal(await get(proxy, '/wrong_ca'), 503);
  assert.equal(await proxy.stat('cluster.wrong_ca.ssl.fail_verify_error'), 2);
  assert.equal(await proxy.stat('cluster.wrong_ca.ssl.handshake'), 0);
  assert.equal(await proxy.stat('cluster.wrong_ca.upstream_cx_connect_fail'), 2);
  await waitFor('the handshake failure logged', () => (logLines(proxy, `TLS handshake with upstream 127.0.0.1:${stranger.port} failed`) > 0 ? true : undefined));
  assert.equal(logLines(proxy, `TLS handshake with upstream 127.0.0.1:${stranger.port} failed`), 1);
  assert.match(proxy.stderr, /does not verify against trusted_ca \(ssl\.fail_verify_error\)/);

  // A SAN that does not match: refused and counted.
  assert.equal(await get(proxy, '/wrong_san'), 503);
  assert.equal(await proxy.stat('cluster.wrong_san.ssl.fail_verify_san'), 1);

  // A pinned hash that does not match.
  assert.equal(await get(proxy, '/pinned'), 503);
  assert.equal(await proxy.stat('cluster.pinned.ssl.fail_verify_cert_hash'), 1);

  // raw_buffer: plaintext.
  assert.equal(await get(proxy, '/raw'), 200);
  assert.deepEqual(plain.seen, [{ tls: false, servername: null, clientCn: null }]);

  // auto_sni: the host header is the SNI, one connection per name; auto_san_validation checks it.
  const before = backend.seen.length;
  assert.equal(await get(proxy, '/auto_sni', 'backend.test:8080'), 200);
  assert.equal(await get(proxy, '/auto_sni', 'a.wild.test'), 200);
  assert.deepEqual(backend.seen.slice(before).map((seen) => seen.servername), ['backend.test', 'a.wild.test']);
  assert.equal(await get(proxy, '/auto_sni', 'other.test'), 503);
  assert.equal(await proxy.stat('cluster.auto_sni.ssl.fail_verify_san'), 1);
  // An IP address is never sent as SNI; the certificate holds it as a SAN, so the check passes.
  assert.equal(await get(proxy, '/auto_sni', '127.0.0.1'), 200);
  assert.equal(backend.seen[backend.seen.length - 1].servername, null);
});

test('transport_socket_matches: one cluster sends mTLS to the endpoints that advertise it and plaintext to the others', TIMEOUT, async (t) => {
  const pki = makePki(t);
  // The mTLS endpoint refuses a client without a certificate from the CA.
  const mtls = await recordingServer(t, { key: pki.server.key, cert: pki.server.cert, requestCert: true, rejectUnauthorized: true, ca: pki.ca.cert });
  const plain = await recordingServer(t, null);
  const mtlsSocket = tlsSocket({
    sni: 'backend.test',
    common_tls_context: { tls_certificates: [clientCertificate(pki.client)], validation_context: { trusted_ca: inline(pki.ca.cert) } },
  });
  const proxy = await startProxy({
    static_resources: {
      listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'mixed' } }])],
      clusters: [
        cluster('mixed', [endpoint(mtls.port, { 'envoy.transport_socket_match': { acceptMTLS: true } }), endpoint(plain.port, { 'envoy.transport_socket_match': { acceptPlaintext: true } })], {
          lb_policy: 'ROUND_ROBIN',
          transport_socket_matches: [
            { name: 'enableMTLS', match: { acceptMTLS: true }, transport_socket: mtlsSocket },
            { name: 'defaultToPlaintext', match: {}, transport_socket: { name: 'envoy.transport_sockets.raw_buffer' } },
          ],
        }),
      ],
    },
  });
  t.after(() => proxy.cleanup());

  for (let i = 0; i < 4; i++) assert.equal(await get(proxy, '/'), 200);
  assert.ok(mtls.seen.length >= 1 && plain.seen.length >= 1, `both endpoints served: ${JSON.stringify({ mtls: mtls.seen, plain: plain.seen })}`);
  for (const seen of mtls.seen) assert.deepEqual(seen, { tls: true, servername: 'backend.test', clientCn: 'proxy-client' });
  for (const seen of plain.seen) assert.equal(seen.tls, false);
  assert.equal(await proxy.stat('cluster.mixed.enableMTLS.total_match_count'), 1);
  assert.equal(await proxy.stat('cluster.mixed.defaultToPlaintext.total_match_count'), 1);
  assert.equal(await proxy.stat('cluster.mixed.default.total_match_count'), 0);
  assert.equal(await proxy.stat('cluster.mixed.ssl.handshake'), mtls.seen.length);
});

/** The health_flags of the host on `port` in GET /clusters ('' before it is listed). */
async function healthFlags(proxy: RunningProxy, clusterName: string, port: number): Promise<string> {
  const line = (await proxy.admin('/clusters')).body.split('\n').find((l) => l.startsWith(`${clusterName}::127.0.0.1:${port}::health_flags::`));
  return line?.slice(line.lastIndexOf('::') + 2) ?? '';
}

test('health checks connect through the transport socket: mTLS where the endpoint advertises it, and transport_socket_match_criteria', TIMEOUT, async (t) => {
  const pki = makePki(t);
  const checks: string[] = [];
  const onRequest = (name: string) => (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.url === '/healthz') checks.push(name);
    res.end('ok');
  };
  const mtls = await recordingServer(t, { key: pki.server.key, cert: pki.server.cert, requestCert: true, rejectUnauthorized: true, ca: pki.ca.cert }, onRequest('mtls'));
  const plain = await recordingServer(t, null, onRequest('plain'));
  const mtlsSocket = tlsSocket({
    sni: 'backend.test',
    common_tls_context: { tls_certificates: [clientCertificate(pki.client)], validation_context: { trusted_ca: inline(pki.ca.cert) } },
  });
  const healthCheck = { timeout: '1s', interval: '0.1s', no_traffic_interval: '0.1s', unhealthy_threshold: 1, healthy_threshold: 1, http_health_check: { path: '/healthz' } };
  const proxy = await startProxy({
    static_resources: {
      listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'mixed' } }])],
      clusters: [
        cluster('mixed', [endpoint(mtls.port, { 'envoy.transport_socket_match': { acceptMTLS: true } }), endpoint(plain.port)], {
          transport_socket_matches: [{ name: 'enableMTLS', match: { acceptMTLS: true }, transport_socket: mtlsSocket }],
          health_checks: [healthCheck],
        }),
        // Traffic would go over TLS, but the checks are told to use the plaintext match: the
        // plaintext server passes them only if they do.
        cluster('criteria', [endpoint(plain.port)], {
          transport_socket: mtlsSocket,
          transport_socket_matches: [{ name: 'checks', match: { plaintextChecks: true }, transport_socket: { name: 'envoy.transport_sockets.raw_buffer' } }],
          health_checks: [{ ...healthCheck, transport_socket_match_criteria: { plaintextChecks: true } }],
        }),
      ],
    },
  });
  t.after(() => proxy.cleanup());

  for (const [name, port] of [['mixed', mtls.port], ['mixed', plain.port], ['criteria', plain.port]] as const) {
    await waitFor(`${name} 127.0.0.1:${port} healthy`, async () => ((await healthFlags(proxy, name, port)) === 'healthy' ? true : undefined), 20_000);
  }
  assert.ok(checks.includes('mtls') && checks.includes('plain'), `checks reached both servers: ${checks.join(',')}`);
  for (const seen of mtls.seen) assert.deepEqual(seen, { tls: true, servername: 'backend.test', clientCn: 'proxy-client' });
  assert.ok((await proxy.stat('cluster.mixed.ssl.handshake'))! >= 1);
  assert.equal(await proxy.stat('cluster.mixed.health_check.network_failure'), 0);
  assert.equal(await proxy.stat('cluster.criteria.health_check.network_failure'), 0);
  assert.equal(await get(proxy, '/'), 200);
});

test('allow_renegotiation: a server renegotiating fails the request unless allowed', TIMEOUT, async (t) => {
  const pki = makePki(t);
  const renegotiating = await recordingServer(t, { key: pki.server.key, cert: pki.server.cert, maxVersion: 'TLSv1.2' }, (req, res) => {
    (req.socket as tls.TLSSocket).renegotiate({ rejectUnauthorized: false }, (error) => {
      if (error === null) res.end('renegotiated');
      else res.destroy();
    });
  });
  const routes = ['refused', 'allowed'].map((name) => ({ match: { prefix: `/${name}` }, route: { cluster: name } }));
  const proxy = await startProxy({
    static_resources: {
      listeners: [httpListener('in', 0, routes)],
      clusters: [
        cluster('refused', [endpoint(renegotiating.port)], { transport_socket: tlsSocket({}) }),
        cluster('allowed', [endpoint(renegotiating.port)], { transport_socket: tlsSocket({ allow_renegotiation: true }) }),
      ],
    },
  });
  t.after(() => proxy.cleanup());
  assert.equal(await get(proxy, '/allowed'), 200);
  assert.equal(await get(proxy, '/refused'), 503);
});

test('tcp_proxy over TLS, and the deprecated tls_context with a warning', TIMEOUT, async (t) => {
  const pki = makePki(t);
  const sockets = new Set<tls.TLSSocket>();
  const echo = tls.createServer({ key: pki.server.key, cert: pki.server.cert }, (socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.pipe(socket);
  });
  await listen(echo);
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    return closeServer(echo);
  });
  const echoPort = (echo.address() as net.AddressInfo).port;
  const backend = await recordingServer(t, { key: pki.server.key, cert: pki.server.cert });
  const proxy = await startProxy(
    {
      static_resources: {
        listeners: [
          httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'legacy' } }]),
          {
            name: 'tcp',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            filter_chains: [{ filters: [{ name: 'envoy.tcp_proxy', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'tcp', cluster: 'echo' } }] }],
          },
        ],
        clusters: [
          cluster('legacy', [endpoint(backend.port)], { tls_context: { sni: 'backend.test', common_tls_context: { validation_context: { trusted_ca: { filename: pki.ca.certPath } } } } }),
          cluster('echo', [endpoint(echoPort)], { transport_socket: tlsSocket({ common_tls_context: { validation_context: { trusted_ca: inline(pki.ca.cert) } } }) }),
        ],
      },
    },
    ['--bootstrap-version', '2'],
  );
  t.after(() => proxy.cleanup());
  assert.match(proxy.stderr, /static_resources\.clusters\[0\]\.tls_context: deprecated option/);
  assert.equal(await get(proxy, '/'), 200);
  assert.deepEqual(backend.seen, [{ tls: true, servername: 'backend.test', clientCn: null }]);

  const client = net.connect(await proxy.listenerPort('tcp'), '127.0.0.1');
  t.after(() => client.destroy());
  let echoed = '';
  client.on('data', (chunk: Buffer) => (echoed += chunk.toString()));
  client.write('over tls');
  await waitFor('the echo through tcp_proxy', () => (echoed === 'over tls' ? true : undefined));
  assert.equal(await proxy.stat('cluster.echo.ssl.handshake'), 1);
});
