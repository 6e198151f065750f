// Downstream TLS with the real proxy: two filter chains chosen by SNI (the TLS inspector reads
// it), each with its certificate, terminating TLS in front of a plain HTTP upstream; a client
// certificate required on one; GET /certs and server.days_until_first_cert_expiring; and a
// certificate replaced by atomic rename, picked up by new connections while established ones
// carry on. A TLS cluster's client certificate and CA are listed by /certs too. Certificates
// are made by openssl for each run.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as https from 'node:https';
import type * as tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { closeServer, startUpstream, type Upstream } from '../helpers/http_peers';
import { makeTempDir, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { type CertificateFiles, makeCa, makeLeaf } from '../helpers/certificates';

const TIMEOUT = { timeout: 90_000 };
const TLS_CONTEXT = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
const TLS_INSPECTOR = 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector';

interface Reply {
  readonly status: number;
  readonly body: string;
  /** The serial number of the certificate the proxy presented, lower case. */
  readonly serial: string;
  readonly reusedSocket: boolean;
}

function get(port: number, servername: string, options: https.RequestOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: '/', servername, timeout: 5000, agent: false, ...options }, (res) => {
      const socket = res.socket as tls.TLSSocket;
      const serial = socket.getPeerX509Certificate()?.serialNumber.toLowerCase() ?? '';
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, serial, reusedSocket: req.reusedSocket }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

function serialOf(file: string): string {
  return new X509Certificate(fs.readFileSync(file)).serialNumber.toLowerCase();
}

function tlsChain(serverNames: string[], cert: CertificateFiles, context: Record<string, unknown> = {}): Record<string, unknown> {
  const chain = httpListener('unused', 0, [{ match: { prefix: '/' }, route: { cluster: 'web' } }]).filter_chains[0];
  return {
    ...chain,
    filter_chain_match: { server_names: serverNames },
    transport_socket: {
      name: 'envoy.transport_sockets.tls',
      typed_config: {
        '@type': TLS_CONTEXT,
        common_tls_context: { tls_certificates: [{ certificate_chain: { filename: cert.cert }, private_key: { filename: cert.key } }] },
        ...context,
      },
    },
  };
}

describe('downstream TLS', TIMEOUT, () => {
  let dir: string;
  let upstream: Upstream;
  let proxy: RunningProxy;
  let port: number;
  let ca: CertificateFiles;
  let certA: CertificateFiles;
  let certB: CertificateFiles;
  let client: CertificateFiles;
  let clusterClient: CertificateFiles;

  before(async () => {
    dir = makeTempDir();
    ca = makeCa(dir, 'ca', 90);
    certA = makeLeaf(dir, ca, 'a', 'DNS:a.example', 30);
    certB = makeLeaf(dir, ca, 'b', 'DNS:*.b.example,URI:spiffe://b.example/server', 60);
    client = makeLeaf(dir, ca, 'client', 'URI:spiffe://b.example/client', 10);
    // Outlives certificate a, so that the expiry gauge still follows a.
    clusterClient = makeLeaf(dir, ca, 'cluster_client', 'URI:spiffe://proxy/client', 40);
    upstream = await startUpstream('web', (_req, res) => res.end('from upstream'));
    const chainB = tlsChain(['*.b.example'], certB, {
      require_client_certificate: true,
      common_tls_context: {
        tls_certificates: [{ certificate_chain: { filename: certB.cert }, private_key: { filename: certB.key } }],
        validation_context: { trusted_ca: { filename: ca.cert } },
      },
    });
    proxy = await startProxy(
      {
        static_resources: {
          listeners: [
            {
              name: 'tls_in',
              address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
              listener_filters: [{ name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': TLS_INSPECTOR } }],
              filter_chains: [tlsChain(['a.example'], certA), chainB],
            },
          ],
          clusters: [
            localCluster('web', upstream.port),
            {
              ...localCluster('secure', upstream.port),
              transport_socket: {
                name: 'envoy.transport_sockets.tls',
                typed_config: {
                  '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
                  common_tls_context: {
                    tls_certificates: [{ certificate_chain: { filename: clusterClient.cert }, private_key: { filename: clusterClient.key } }],
                    validation_context: { trusted_ca: { filename: ca.cert } },
                  },
                },
              },
            },
          ],
        },
      },
      ['--concurrency', '2'],
    );
    port = await proxy.listenerPort('tls_in');
  });

  after(async () => {
    await proxy?.cleanup();
    if (upstream !== undefined) await closeServer(upstream.server);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('each SNI gets its chain and certificate; TLS is terminated in front of a plain upstream', async () => {
    const a = await get(port, 'a.example', { ca: fs.readFileSync(ca.cert) });
    assert.deepEqual([a.status, a.body, a.serial], [200, 'from upstream', serialOf(certA.cert)]);
    const b = await get(port, 'x.b.example', { ca: fs.readFileSync(ca.cert), cert: fs.readFileSync(client.cert), key: fs.readFileSync(client.key) });
    assert.deepEqual([b.status, b.body, b.serial], [200, 'from upstream', serialOf(certB.cert)]);
    // No chain matches another name: the connection is closed and counted.
    await assert.rejects(get(port, 'c.example', { rejectUnauthorized: false }));
    await waitFor('no_filter_chain_match', async () => ((await proxy.stat(`listener.127.0.0.1_${port}.no_filter_chain_match`)) ?? 0) >= 1 || undefined, 10_000);
    assert.ok(((await proxy.stat('tls_inspector.sni_found')) ?? 0) >= 3);
  });

  test('require_client_certificate refuses a client without one, and counts it', async () => {
    await assert.rejects(get(port, 'x.b.example', { ca: fs.readFileSync(ca.cert) }));
    const stat = `listener.127.0.0.1_${port}.ssl.fail_verify_no_cert`;
    await waitFor(stat, async () => ((await proxy.stat(stat)) ?? 0) >= 1 || undefined, 10_000);
    const other = makeCa(dir, 'other_ca', 10);
    const stranger = makeLeaf(dir, other, 'stranger', 'DNS:stranger.example', 10);
    await assert.rejects(get(port, 'x.b.example', { ca: fs.readFileSync(ca.cert), cert: fs.readFileSync(stranger.cert), key: fs.readFileSync(stranger.key) }));
    const verifyError = `listener.127.0.0.1_${port}.ssl.fail_verify_error`;
    await waitFor(verifyError, async () => ((await proxy.stat(verifyError)) ?? 0) >= 1 || undefined, 10_000);
  });

  test('GET /certs lists every loaded certificate with its days until expiration, and the gauge has the fewest', async () => {
    const certs = JSON.parse((await proxy.admin('/certs')).body) as { certificates: { ca_cert: Record<string, unknown>[]; cert_chain: Record<string, unknown>[] }[] };
    // Clusters' contexts first, then listeners', as Envoy's context manager lists them.
    assert.equal(certs.certificates.length, 3);
    const [cluster, a, b] = certs.certificates;
    assert.equal(cluster.ca_cert[0].path, ca.cert);
    assert.equal(cluster.cert_chain[0].path, clusterClient.cert);
    assert.equal(cluster.cert_chain[0].days_until_expiration, '39');
    assert.deepEqual(a.ca_cert, []);
    assert.equal(a.cert_chain.length, 1);
    const leafA = new X509Certificate(fs.readFileSync(certA.cert));
    assert.deepEqual(a.cert_chain[0], {
      path: certA.cert,
      serial_number: leafA.serialNumber.toLowerCase(),
      subject_alt_names: [{ dns: 'a.example' }],
      // Made valid for 30 days a moment ago: 29 whole days remain.
      days_until_expiration: '29',
      valid_from: new Date(leafA.validFrom).toISOString().replace('.000Z', 'Z'),
      expiration_time: new Date(leafA.validTo).toISOString().replace('.000Z', 'Z'),
    });
    assert.equal(b.ca_cert[0].path, ca.cert);
    assert.equal(b.ca_cert[0].days_until_expiration, '89');
    assert.deepEqual(b.cert_chain[0].subject_alt_names, [{ dns: '*.b.example' }, { uri: 'spiffe://b.example/server' }]);
    assert.equal(b.cert_chain[0].days_until_expiration, '59');
    assert.equal(await proxy.stat('server.days_until_first_cert_expiring'), 29);
  });

  test('a certificate replaced by atomic rename is picked up by new connections; established ones carry on', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: fs.readFileSync(ca.cert) });
    try {
      const before = await get(port, 'a.example', { agent });
      const oldSerial = serialOf(certA.cert);
      assert.equal(before.serial, oldSerial);
      // The new pair is written beside the old one, then renamed over it: key first, so that
      // a reload between the renames fails to load (mismatch) and keeps the old pair.
      const next = makeLeaf(dir, ca, 'a_next', 'DNS:a.example', 20);
      const newSerial = serialOf(next.cert);
      fs.renameSync(next.key, certA.key);
      fs.renameSync(next.cert, certA.cert);
      await waitFor('the new certificate on a new connection', async () => ((await get(port, 'a.example', { ca: fs.readFileSync(ca.cert) })).serial === newSerial ? true : undefined), 15_000);
      const still = await get(port, 'a.example', { agent });
      // The connection made before the reload still serves.
      assert.deepEqual([still.reusedSocket, still.status, still.body], [true, 200, 'from upstream']);
      await waitFor('/certs with the new serial', async () => {
        const certs = JSON.parse((await proxy.admin('/certs')).body) as { certificates: { cert_chain: { serial_number: string; days_until_expiration: string }[] }[] };
        const chain = certs.certificates[1].cert_chain[0];
        return chain.serial_number === newSerial && chain.days_until_expiration === '19' ? true : undefined;
      }, 15_000);
      await waitFor('the gauge after the reload', async () => ((await proxy.stat('server.days_until_first_cert_expiring')) === 19 ? true : undefined), 15_000);
    } finally {
      agent.destroy();
    }
  });
});
