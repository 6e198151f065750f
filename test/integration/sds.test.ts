// SDS and static secrets on the real proxy with two workers. Over ADS (V3): a listener's
// certificate comes from a management server before the proxy serves, rotates (new connections
// see the new serial, an established one carries on; /certs, the expiry gauge, /config_dump and
// the sds.* and ssl_context_update_by_sds stats follow), and a secret whose key does not match
// its certificate is NACKed with its field path while the old one keeps serving. Over files: the
// same rotation by atomic rename, an upstream TLS context whose validation context comes from
// SDS (a CA pushed that does not sign the upstream fails its handshakes) and whose client
// certificate is a static secret by name, for a static cluster and a CDS one (a CDS cluster
// naming an unknown static secret is rejected, one naming an SDS secret warms until it comes). A listener whose secret has not come (V2, its
// own gRPC stream) resets its connections until it does. REST polling delivers secrets too. And
// --mode validate agrees with serving.

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import type * as tls from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { type CertificateFiles, makeCa, makeLeaf } from '../helpers/certificates';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { closeServer, startUpstream, type Upstream } from '../helpers/http_peers';
import { assertRefusedAlike } from '../helpers/cli_runs';
import { giveUpAfter, makeTempDir, request, type RunningProxy, spawnProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { XdsServer } from '../helpers/xds_server';
import type { JsonObject } from '../../src/config/json';

const TIMEOUT = { timeout: 120_000 };
const SECRET_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret';
const SECRET_V2_TYPE = 'type.googleapis.com/envoy.api.v2.auth.Secret';
const DOWNSTREAM_TLS = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
const UPSTREAM_TLS = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';

interface Reply {
  readonly status: number;
  readonly body: string;
  /** The serial number of the certificate the proxy presented, lower case. */
  readonly serial: string;
  readonly reusedSocket: boolean;
}

/** A GET over TLS; `agent` false: a connection of its own. The proxy's certificate is not checked, only read. */
function tlsGet(port: number, agent: https.Agent | false = false): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: '/', rejectUnauthorized: false, timeout: 5000, agent }, (res) => {
      const serial = (res.socket as tls.TLSSocket).getPeerX509Certificate()?.serialNumber.toLowerCase() ?? '';
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

/** A Secret resource of a certificate and its key, inline. */
function inlineCertificate(name: string, cert: CertificateFiles, type = SECRET_TYPE): JsonObject {
  return {
    '@type': type,
    name,
    tls_certificate: { certificate_chain: { inline_string: fs.readFileSync(cert.cert, 'utf8') }, private_key: { inline_string: fs.readFileSync(cert.key, 'utf8') } },
  };
}

/** `listener` with its filter chain's certificate named by `sdsSecretConfig`. */
function withSdsCertificate(listener: ReturnType<typeof httpListener>, sdsSecretConfig: Record<string, unknown>): ReturnType<typeof httpListener> {
  listener.filter_chains[0].transport_socket = {
    name: 'envoy.transport_sockets.tls',
    typed_config: { '@type': DOWNSTREAM_TLS, common_tls_context: { tls_certificate_sds_secret_configs: [sdsSecretConfig] } },
  };
  return listener;
}

/** The static cluster `xds` of the management server, and ADS to it (V3). */
function adsParts(xds: XdsServer): { cluster: Record<string, unknown>; dynamicResources: Record<string, unknown> } {
  return {
    cluster: { ...localCluster('xds', xds.port), http2_protocol_options: {} },
    dynamicResources: { ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] } },
  };
}

/** Fresh connections until `count` in a row present `serial`: both workers have the secret. */
async function untilServed(port: number, serial: string, what: string): Promise<void> {
  let inARow = 0;
  await waitFor(
    what,
    async () => {
      inARow = (await tlsGet(port)).serial === serial ? inARow + 1 : 0;
      return inARow >= 6 ? true : undefined;
    },
    20_000,
  );
}

async function statAtLeast(proxy: RunningProxy, name: string, value: number): Promise<void> {
  await waitFor(`${name} >= ${value}`, async () => (((await proxy.stat(name)) ?? 0) >= value ? true : undefined), 15_000);
}

interface SecretsDump {
  static_secrets?: { name: string }[];
  dynamic_active_secrets?: { name: string; version_info: string; last_updated: string; secret: Record<string, unknown> }[];
  dynamic_warming_secrets?: { name: string; version_info: string; secret: Record<string, unknown> }[];
}

async function secretsDump(proxy: RunningProxy): Promise<SecretsDump> {
  const dump = JSON.parse((await proxy.admin('/config_dump')).body) as { configs: Record<string, unknown>[] };
  return dump.configs.find((c) => String(c['@type']).endsWith('SecretsConfigDump')) as SecretsDump;
}

async function certSerials(proxy: RunningProxy): Promise<string[]> {
  const certs = JSON.parse((await proxy.admin('/certs')).body) as { certificates: { cert_chain: { serial_number: string }[] }[] };
  return certs.certificates.flatMap((c) => c.cert_chain.map((chain) => chain.serial_number));
}

describe('SDS over ADS with two workers', TIMEOUT, () => {
  let dir: string;
  let xds: XdsServer;
  let upstream: Upstream;
  let proxy: RunningProxy;
  let port: number;
  let first: CertificateFiles;
  let second: CertificateFiles;

  before(async () => {
    dir = makeTempDir();
    const ca = makeCa(dir, 'ca', 90);
    first = makeLeaf(dir, ca, 'first', 'DNS:proxy.example', 30);
    second = makeLeaf(dir, ca, 'second', 'DNS:proxy.example', 10);
    xds = await XdsServer.start();
    xds.setResources(SECRET_TYPE, '1', [inlineCertificate('server_cert', first)]);
    upstream = await startUpstream('web', (_req, res) => res.end('from upstream'));
    const ads = adsParts(xds);
    const listener = withSdsCertificate(httpListener('tls_in', 0, [{ match: { prefix: '/' }, route: { cluster: 'web' } }]), {
      name: 'server_cert',
      sds_config: { ads: {}, resource_api_version: 'V3' },
    });
    proxy = await startProxy(
      { node: { id: 'sds-test', cluster: 'sds-test' }, dynamic_resources: ads.dynamicResources, static_resources: { listeners: [listener], clusters: [ads.cluster, localCluster('web', upstream.port)] } },
      ['--concurrency', '2'],
    );
    port = await proxy.listenerPort('tls_in');
  });

  after(async () => {
    await proxy?.cleanup();
    await xds?.close();
    if (upstream !== undefined) await closeServer(upstream.server);
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the secret is in before the proxy serves: traffic, /certs, stats, config dump', async () => {
    const reply = await tlsGet(port);
    assert.deepEqual([reply.status, reply.body, reply.serial], [200, 'from upstream', serialOf(first.cert)]);
    const request = xds.requests.find((r) => r.type_url === SECRET_TYPE)!;
    assert.equal(request.path, '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources');
    assert.deepEqual(request.resource_names, ['server_cert']);
    assert.deepEqual(await certSerials(proxy), [serialOf(first.cert)]);
    assert.equal(await proxy.stat('server.days_until_first_cert_expiring'), 29);
    assert.equal(await proxy.stat('sds.server_cert.update_success'), 1);
    assert.equal(await proxy.stat(`listener.127.0.0.1_${port}.server_ssl_socket_factory.ssl_context_update_by_sds`), 1);
    assert.equal(await proxy.stat(`listener.127.0.0.1_${port}.server_ssl_socket_factory.downstream_context_secrets_not_ready`), 0);
    const dump = await secretsDump(proxy);
    assert.equal(dump.dynamic_active_secrets?.length, 1);
    const active = dump.dynamic_active_secrets![0]!;
    assert.equal(active.name, 'server_cert');
    assert.equal(active.version_info, '1');
    assert.match(active.last_updated, /^\d{4}-\d\d-\d\dT/);
    const certificate = (active.secret as { tls_certificate: { certificate_chain: { inline_string: string }; private_key: { inline_string: string } } }).tls_certificate;
    assert.equal(active.secret['@type'], SECRET_TYPE);
    assert.equal(certificate.private_key.inline_string, '[redacted]');
    assert.match(certificate.certificate_chain.inline_string, /BEGIN CERTIFICATE/);
    assert.equal(dump.dynamic_warming_secrets, undefined);
  });

  test('a rotated certificate reaches new connections of both workers; an established one carries on', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
    try {
      const held = await tlsGet(port, agent);
      assert.equal(held.serial, serialOf(first.cert));
      xds.setResources(SECRET_TYPE, '2', [inlineCertificate('server_cert', second)]);
      await untilServed(port, serialOf(second.cert), 'the new certificate on new connections');
      const still = await tlsGet(port, agent);
      // The connection made before the rotation still serves (a reused socket's response has no peer certificate to read).
      assert.deepEqual([still.reusedSocket, still.status, still.body], [true, 200, 'from upstream']);
    } finally {
      agent.destroy();
    }
    assert.deepEqual(await certSerials(proxy), [serialOf(second.cert)]);
    assert.equal(await proxy.stat('server.days_until_first_cert_expiring'), 9);
    assert.equal(await proxy.stat('sds.server_cert.update_success'), 2);
    assert.equal(await proxy.stat(`listener.127.0.0.1_${port}.server_ssl_socket_factory.ssl_context_update_by_sds`), 2);
    assert.equal((await secretsDump(proxy)).dynamic_active_secrets![0]!.version_info, '2');
    const ack = await waitFor('the ACK of version 2', () => xds.requests.find((r) => r.type_url === SECRET_TYPE && r.version_info === '2'));
    assert.equal(ack.error_detail, null);
  });

  test('a key that does not match its certificate is NACKed with its path; the old certificate keeps serving', async () => {
    const mismatched = { ...inlineCertificate('server_cert', second), tls_certificate: { certificate_chain: { inline_string: fs.readFileSync(second.cert, 'utf8') }, private_key: { inline_string: fs.readFileSync(first.key, 'utf8') } } };
    xds.setResources(SECRET_TYPE, '3', [mismatched]);
    const nack = await waitFor('the NACK', () => xds.requests.find((r) => r.type_url === SECRET_TYPE && r.error_detail !== null));
    assert.equal(nack.version_info, '2');
    assert.match(nack.error_detail!.message, /^resources\[0\]\.tls_certificate\.private_key: the private key does not match the certificate/);
    assert.equal(await proxy.stat('sds.server_cert.update_rejected'), 1);
    assert.equal((await tlsGet(port)).serial, serialOf(second.cert));
    assert.equal((await secretsDump(proxy)).dynamic_active_secrets![0]!.version_info, '2');
  });

  test('/stats/prometheus renders the sds and socket factory counters', async () => {
    const text = (await proxy.admin('/stats/prometheus')).body;
    assert.match(text, /^# TYPE proxy_sds_server_cert_update_success counter$/m);
    assert.match(text, /^proxy_sds_server_cert_update_success(\{\})? 2$/m);
    assert.match(text, /^proxy_listener_server_ssl_socket_factory_ssl_context_update_by_sds\{[^}]*\} 2$/m);
  });
});

/** A DiscoveryResponse file of one secret, written aside and renamed into place. */
function pushSecretFile(file: string, version: string, secret: Record<string, unknown>): void {
  const aside = `${file}.${version}.tmp`;
  fs.writeFileSync(aside, JSON.stringify({ version_info: version, resources: [secret] }));
  fs.renameSync(aside, file);
}

function fileCertificate(name: string, cert: CertificateFiles): Record<string, unknown> {
  return { '@type': SECRET_TYPE, name, tls_certificate: { certificate_chain: { filename: cert.cert }, private_key: { filename: cert.key } } };
}

function fileValidationContext(name: string, ca: CertificateFiles): Record<string, unknown> {
  return { '@type': SECRET_TYPE, name, validation_context: { trusted_ca: { filename: ca.cert } } };
}

describe('SDS from files, a static secret and an upstream validation context from SDS', TIMEOUT, () => {
  let dir: string;
  let proxy: RunningProxy;
  let port: number;
  let upstream: https.Server;
  let ca: CertificateFiles;
  let otherCa: CertificateFiles;
  let first: CertificateFiles;
  let second: CertificateFiles;
  let serverFile: string;
  let caFile: string;

  before(async () => {
    dir = makeTempDir();
    ca = makeCa(dir, 'ca', 90);
    otherCa = makeCa(dir, 'other_ca', 90);
    first = makeLeaf(dir, ca, 'first', 'DNS:proxy.example', 30);
    second = makeLeaf(dir, ca, 'second', 'DNS:proxy.example', 20);
    const upstreamCert = makeLeaf(dir, ca, 'upstream', 'IP:127.0.0.1', 30);
    const client = makeLeaf(dir, ca, 'client', 'URI:spiffe://proxy/client', 30);
    // The upstream requires a client certificate its CA signed, and closes each connection
    // after its response: every request makes a new handshake.
    upstream = https.createServer(
      { cert: fs.readFileSync(upstreamCert.cert), key: fs.readFileSync(upstreamCert.key), ca: fs.readFileSync(ca.cert), requestCert: true, rejectUnauthorized: true },
      (_req, res) => res.writeHead(200, { connection: 'close' }).end('secure upstream'),
    );
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const upstreamPort = (upstream.address() as { port: number }).port;
    serverFile = path.join(dir, 'server_secret.json');
    caFile = path.join(dir, 'ca_secret.json');
    pushSecretFile(serverFile, '1', fileCertificate('server', first));
    pushSecretFile(caFile, '1', fileValidationContext('upstream_ca', ca));
    const listener = withSdsCertificate(httpListener('tls_in', 0, [{ match: { prefix: '/' }, route: { cluster: 'secure' } }]), {
      name: 'server',
      sds_config: { path: serverFile, resource_api_version: 'V3' },
    });
    proxy = await startProxy(
      {
        static_resources: {
          secrets: [{ name: 'client', tls_certificate: { certificate_chain: { filename: client.cert }, private_key: { filename: client.key } } }],
          listeners: [listener],
          clusters: [
            {
              ...localCluster('secure', upstreamPort),
              transport_socket: {
                name: 'envoy.transport_sockets.tls',
                typed_config: {
                  '@type': UPSTREAM_TLS,
                  common_tls_context: {
                    tls_certificate_sds_secret_configs: [{ name: 'client' }],
                    validation_context_sds_secret_config: { name: 'upstream_ca', sds_config: { path: caFile } },
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
    if (upstream !== undefined) {
      upstream.closeAllConnections();
      await new Promise<void>((resolve) => upstream.close(() => resolve()));
    }
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the listener serves the file secret; the cluster presents the static one and verifies with the SDS CA', async () => {
    const reply = await tlsGet(port);
    assert.deepEqual([reply.status, reply.body, reply.serial], [200, 'secure upstream', serialOf(first.cert)]);
    assert.equal(await proxy.stat('sds.server.update_success'), 1);
    assert.equal(await proxy.stat('sds.upstream_ca.update_success'), 1);
    assert.equal(await proxy.stat('cluster.secure.client_ssl_socket_factory.ssl_context_update_by_sds'), 1);
    assert.ok(((await proxy.stat('cluster.secure.ssl.handshake')) ?? 0) >= 1);
    const dump = await secretsDump(proxy);
    assert.deepEqual(dump.static_secrets?.map((s) => s.name), ['client']);
    assert.deepEqual(dump.dynamic_active_secrets?.map((s) => s.name).sort(), ['server', 'upstream_ca']);
    // The cluster's context (client certificate and the SDS CA), then the listener's.
    const serials = await certSerials(proxy);
    assert.equal(serials.length, 2);
    assert.equal(serials[1], serialOf(first.cert));
  });

  test('a CA that does not sign the upstream, pushed by rename, fails its handshakes; the right one back, they pass', async () => {
    pushSecretFile(caFile, '2', fileValidationContext('upstream_ca', otherCa));
    await waitFor('a 503 from the failed verification', async () => ((await tlsGet(port)).status === 503 ? true : undefined), 20_000);
    await statAtLeast(proxy, 'cluster.secure.ssl.fail_verify_error', 1);
    pushSecretFile(caFile, '3', fileValidationContext('upstream_ca', ca));
    await waitFor('the upstream again', async () => ((await tlsGet(port)).status === 200 ? true : undefined), 20_000);
    assert.equal(await proxy.stat('sds.upstream_ca.update_success'), 3);
  });

  test('a certificate rotated by rename reaches new connections; an established one carries on', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
    try {
      assert.equal((await tlsGet(port, agent)).serial, serialOf(first.cert));
      pushSecretFile(serverFile, '2', fileCertificate('server', second));
      await untilServed(port, serialOf(second.cert), 'the new certificate on new connections');
      const still = await tlsGet(port, agent);
      assert.deepEqual([still.reusedSocket, still.status, still.body], [true, 200, 'secure upstream']);
    } finally {
      agent.destroy();
    }
    await waitFor('/certs with the new serial', async () => ((await certSerials(proxy)).includes(serialOf(second.cert)) ? true : undefined));
    assert.equal(await proxy.stat(`listener.127.0.0.1_${port}.server_ssl_socket_factory.ssl_context_update_by_sds`), 2);
  });

  test('a secret file whose certificate does not parse, or of another secret, is rejected; the old certificate keeps serving', async () => {
    const garbage = path.join(dir, 'garbage.pem');
    fs.writeFileSync(garbage, 'not a certificate\n');
    pushSecretFile(serverFile, '3', { '@type': SECRET_TYPE, name: 'server', tls_certificate: { certificate_chain: { filename: garbage }, private_key: { filename: second.key } } });
    await statAtLeast(proxy, 'sds.server.update_rejected', 1);
    assert.equal((await tlsGet(port)).serial, serialOf(second.cert));
    // A file of another secret is refused too (a file is not filtered by name, as in Envoy).
    pushSecretFile(serverFile, '4', fileCertificate('other', first));
    await statAtLeast(proxy, 'sds.server.update_rejected', 2);
    assert.equal((await tlsGet(port)).serial, serialOf(second.cert));
    assert.equal((await secretsDump(proxy)).dynamic_active_secrets!.find((s) => s.name === 'server')!.version_info, '2');
  });
});

describe('a CDS cluster naming secrets', TIMEOUT, () => {
  test('its static and SDS secrets are found when it is added; one naming an unknown static secret is rejected', async (t) => {
    const dir = makeTempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const ca = makeCa(dir, 'ca', 90);
    const upstreamCert = makeLeaf(dir, ca, 'upstream', 'IP:127.0.0.1', 30);
    const client = makeLeaf(dir, ca, 'client', 'URI:spiffe://proxy/client', 30);
    const upstream = https.createServer(
      { cert: fs.readFileSync(upstreamCert.cert), key: fs.readFileSync(upstreamCert.key), ca: fs.readFileSync(ca.cert), requestCert: true, rejectUnauthorized: true },
      (_req, res) => res.end('secure upstream'),
    );
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    t.after(async () => {
      upstream.closeAllConnections();
      await new Promise<void>((resolve) => upstream.close(() => resolve()));
    });
    const caFile = path.join(dir, 'ca_secret.json');
    pushSecretFile(caFile, '1', fileValidationContext('upstream_ca', ca));
    const tlsCluster = (name: string, clientSecret: string): Record<string, unknown> => ({
      '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
      ...localCluster(name, (upstream.address() as { port: number }).port),
      transport_socket: {
        name: 'envoy.transport_sockets.tls',
        typed_config: {
          '@type': UPSTREAM_TLS,
          common_tls_context: {
            tls_certificate_sds_secret_configs: [{ name: clientSecret }],
            validation_context_sds_secret_config: { name: 'upstream_ca', sds_config: { path: caFile } },
          },
        },
      },
    });
    const cdsFile = path.join(dir, 'cds.json');
    const pushCds = (version: string, clusters: Record<string, unknown>[]) => {
      fs.writeFileSync(`${cdsFile}.tmp`, JSON.stringify({ version_info: version, resources: clusters }));
      fs.renameSync(`${cdsFile}.tmp`, cdsFile);
    };
    pushCds('1', [tlsCluster('dyn', 'client')]);
    const proxy = await startProxy(
      {
        node: { id: 'sds-cds', cluster: 'sds-cds' },
        dynamic_resources: { cds_config: { path: cdsFile } },
        static_resources: {
          secrets: [{ name: 'client', tls_certificate: { certificate_chain: { filename: client.cert }, private_key: { filename: client.key } } }],
          listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'dyn' } }], { route_config: { validate_clusters: false, virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'dyn' } }] }] } })],
        },
      },
      ['--concurrency', '2'],
    );
    t.after(() => proxy.cleanup());
    const port = await proxy.listenerPort('in');
    const get = async () => (await request(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } })).status;
    assert.equal(await get(), 200);
    assert.equal(await proxy.stat('sds.upstream_ca.update_success'), 1);
    assert.equal(await proxy.stat('cluster.dyn.client_ssl_socket_factory.ssl_context_update_by_sds'), 1);
    pushCds('2', [tlsCluster('dyn', 'client'), tlsCluster('bad', 'nope')]);
    await statAtLeast(proxy, 'cluster_manager.cds.update_rejected', 1);
    await waitFor('the rejection logged', () => (/Unknown static secret: nope/.test(proxy.stderr) ? true : undefined));
    assert.match(proxy.stderr, /bad: transport_socket\.typed_config\.common_tls_context\.tls_certificate_sds_secret_configs\[0\]\.name: Unknown static secret: nope/);
    assert.equal(await get(), 200);
  });
});

describe('a CDS cluster over ADS naming an SDS secret', TIMEOUT, () => {
  test('warms until the secret comes, then serves', async (t) => {
    const dir = makeTempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const ca = makeCa(dir, 'ca', 90);
    const upstreamCert = makeLeaf(dir, ca, 'upstream', 'IP:127.0.0.1', 30);
    const upstream = https.createServer({ cert: fs.readFileSync(upstreamCert.cert), key: fs.readFileSync(upstreamCert.key) }, (_req, res) => res.end('secure upstream'));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    t.after(async () => {
      upstream.closeAllConnections();
      await new Promise<void>((resolve) => upstream.close(() => resolve()));
    });
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    const CLUSTER_TYPE = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
    xds.setResources(CLUSTER_TYPE, 'c1', []);
    const ads = adsParts(xds);
    const route = { match: { prefix: '/' }, route: { cluster: 'late' } };
    const proxy = await startProxy(
      {
        node: { id: 'sds-warming', cluster: 'sds-warming' },
        dynamic_resources: { ...ads.dynamicResources, cds_config: { ads: {}, resource_api_version: 'V3' } },
        static_resources: {
          listeners: [httpListener('in', 0, [route], { route_config: { validate_clusters: false, virtual_hosts: [{ name: 'all', domains: ['*'], routes: [route] }] } })],
          clusters: [ads.cluster],
        },
      },
      ['--concurrency', '2'],
    );
    t.after(() => proxy.cleanup());
    const port = await proxy.listenerPort('in');
    const get = async () => (await request(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } })).status;
    xds.setResources(CLUSTER_TYPE, 'c2', [
      {
        '@type': CLUSTER_TYPE,
        ...localCluster('late', (upstream.address() as { port: number }).port),
        transport_socket: {
          name: 'envoy.transport_sockets.tls',
          typed_config: { '@type': UPSTREAM_TLS, common_tls_context: { validation_context_sds_secret_config: { name: 'late_ca', sds_config: { ads: {}, resource_api_version: 'V3' } } } },
        },
      },
    ]);
    await waitFor('the cluster warming', async () => ((await proxy.stat('cluster_manager.warming_clusters')) === 1 ? true : undefined));
    await waitFor('the secret asked for', () => xds.requests.find((r) => r.type_url === SECRET_TYPE && r.resource_names.includes('late_ca')));
    assert.equal(await get(), 503);
    assert.equal(await proxy.stat('cluster_manager.warming_clusters'), 1);
    xds.setResources(SECRET_TYPE, 's1', [{ '@type': SECRET_TYPE, name: 'late_ca', validation_context: { trusted_ca: { inline_string: fs.readFileSync(ca.cert, 'utf8') } } }]);
    await waitFor('the cluster serving', async () => ((await get()) === 200 ? true : undefined), 20_000);
    assert.equal(await proxy.stat('cluster_manager.warming_clusters'), 0);
    assert.equal(await proxy.stat('cluster.late.client_ssl_socket_factory.ssl_context_update_by_sds'), 1);
  });
});

describe('a listener whose SDS secret has not come (V2, its own gRPC stream)', TIMEOUT, () => {
  test('starts after initial_fetch_timeout, resets its connections, then serves once the secret comes', async (t) => {
    const dir = makeTempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const ca = makeCa(dir, 'ca', 90);
    const cert = makeLeaf(dir, ca, 'late', 'DNS:proxy.example', 30);
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    const upstream = await startUpstream('web', (_req, res) => res.end('from upstream'));
    t.after(() => closeServer(upstream.server));
    const listener = withSdsCertificate(httpListener('tls_in', 0, [{ match: { prefix: '/' }, route: { cluster: 'web' } }]), {
      name: 'late_cert',
      sds_config: {
        initial_fetch_timeout: '1s',
        api_config_source: { api_type: 'GRPC', transport_api_version: 'V2', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] },
      },
    });
    const proxy = await startProxy(
      { node: { id: 'sds-late', cluster: 'sds-late' }, static_resources: { listeners: [listener], clusters: [{ ...localCluster('xds', xds.port), http2_protocol_options: {} }, localCluster('web', upstream.port)] } },
      ['--concurrency', '2'],
    );
    t.after(() => proxy.cleanup());
    const port = await proxy.listenerPort('tls_in');
    assert.equal(await proxy.stat('sds.late_cert.init_fetch_timeout'), 1);
    const request = xds.requests.find((r) => r.type_url === SECRET_V2_TYPE)!;
    assert.equal(request.path, '/envoy.service.discovery.v2.SecretDiscoveryService/StreamSecrets');
    await assert.rejects(tlsGet(port));
    await statAtLeast(proxy, `listener.127.0.0.1_${port}.server_ssl_socket_factory.downstream_context_secrets_not_ready`, 1);
    assert.deepEqual(await certSerials(proxy), []);
    const warming = (await secretsDump(proxy)).dynamic_warming_secrets;
    assert.deepEqual(warming?.map((s) => [s.name, s.version_info, s.secret]), [['late_cert', 'uninitialized', { '@type': SECRET_TYPE, name: 'late_cert' }]]);

    xds.setResources(SECRET_V2_TYPE, 'v1', [inlineCertificate('late_cert', cert, SECRET_V2_TYPE)]);
    await untilServed(port, serialOf(cert.cert), 'the secret to reach both workers');
    assert.deepEqual(await certSerials(proxy), [serialOf(cert.cert)]);
    assert.equal((await secretsDump(proxy)).dynamic_warming_secrets, undefined);
  });
});

describe('SDS over REST (V3)', TIMEOUT, () => {
  test('a listener takes its certificate from polls, and the next one when it changes', async (t) => {
    const dir = makeTempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const ca = makeCa(dir, 'ca', 90);
    const first = makeLeaf(dir, ca, 'first', 'DNS:proxy.example', 30);
    const second = makeLeaf(dir, ca, 'second', 'DNS:proxy.example', 30);
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    xds.setResources(SECRET_TYPE, 'r1', [inlineCertificate('polled', first)]);
    const upstream = await startUpstream('web', (_req, res) => res.end('from upstream'));
    t.after(() => closeServer(upstream.server));
    const listener = withSdsCertificate(httpListener('tls_in', 0, [{ match: { prefix: '/' }, route: { cluster: 'web' } }]), {
      name: 'polled',
      sds_config: {
        resource_api_version: 'V3',
        api_config_source: { api_type: 'REST', transport_api_version: 'V3', cluster_names: ['xds_rest'], refresh_delay: '0.2s' },
      },
    });
    const proxy = await startProxy(
      { node: { id: 'sds-rest', cluster: 'sds-rest' }, static_resources: { listeners: [listener], clusters: [localCluster('xds_rest', xds.restPort), localCluster('web', upstream.port)] } },
      ['--concurrency', '2'],
    );
    t.after(() => proxy.cleanup());
    const port = await proxy.listenerPort('tls_in');
    assert.equal((await tlsGet(port)).serial, serialOf(first.cert));
    const request = xds.requests.find((r) => r.type_url === SECRET_TYPE)!;
    assert.deepEqual([request.path, request.resource_names], ['/v3/discovery:secrets', ['polled']]);
    xds.setResources(SECRET_TYPE, 'r2', [inlineCertificate('polled', second)]);
    await untilServed(port, serialOf(second.cert), 'the polled certificate on new connections');
    assert.equal((await secretsDump(proxy)).dynamic_active_secrets![0]!.version_info, 'r2');
  });
});

describe('secrets in --mode validate as when serving', TIMEOUT, () => {
  const listenerNaming = (sdsSecretConfig: Record<string, unknown>) =>
    withSdsCertificate(httpListener('tls_in', 0, [{ match: { prefix: '/' }, route: { cluster: 'web' } }]), sdsSecretConfig);
  const cases: ReadonlyArray<[string, (dir: string) => Record<string, unknown>, RegExp]> = [
    [
      'an unknown static secret',
      () => ({ static_resources: { listeners: [listenerNaming({ name: 'nope' })], clusters: [localCluster('web', 9)] } }),
      /static_resources\.listeners\[0\]\.filter_chains\[0\]\.transport_socket\.typed_config\.common_tls_context\.tls_certificate_sds_secret_configs\[0\]\.name: Unknown static secret: nope/,
    ],
    [
      'a validation context named where a certificate is expected',
      () => ({
        static_resources: {
          secrets: [{ name: 'ca', validation_context: { trusted_ca: { inline_string: 'x' } } }],
          listeners: [listenerNaming({ name: 'ca' })],
          clusters: [localCluster('web', 9)],
        },
      }),
      /tls_certificate_sds_secret_configs\[0\]\.name: Unknown static secret: ca/,
    ],
    [
      'session ticket keys',
      () => ({ static_resources: { secrets: [{ name: 'keys', session_ticket_keys: { keys: [{ inline_string: 'k'.repeat(80) }] } }] } }),
      /static_resources\.secrets\[0\]\.session_ticket_keys: session_ticket_keys is not implemented by this build yet/,
    ],
    [
      'an SDS file that does not exist',
      (dir) => ({ static_resources: { listeners: [listenerNaming({ name: 's', sds_config: { path: path.join(dir, 'missing.json') } })], clusters: [localCluster('web', 9)] } }),
      /tls_certificate_sds_secret_configs\[0\]\.sds_config\.path: paths must refer to an existing path in the system: '.*missing\.json' does not exist/,
    ],
    [
      'an ADS source without ads_config',
      () => ({ static_resources: { listeners: [listenerNaming({ name: 's', sds_config: { ads: {} } })], clusters: [localCluster('web', 9)] } }),
      /tls_certificate_sds_secret_configs\[0\]\.sds_config\.ads: ADS must be configured to support an ADS config source/,
    ],
    [
      'a static secret whose certificate does not parse',
      (dir) => {
        fs.writeFileSync(path.join(dir, 'bad.pem'), 'not a certificate\n');
        return {
          static_resources: {
            secrets: [{ name: 'bad', tls_certificate: { certificate_chain: { filename: path.join(dir, 'bad.pem') }, private_key: { filename: path.join(dir, 'bad.pem') } } }],
            listeners: [listenerNaming({ name: 'bad' })],
            clusters: [localCluster('web', 9)],
          },
        };
      },
      /common_tls_context\.tls_certificate_sds_secret_configs\[0\]\.certificate_chain: failed to load certificate chain from .*bad\.pem/,
    ],
    [
      'two static certificates of one name',
      () => ({
        static_resources: {
          secrets: [
            { name: 'twice', tls_certificate: { certificate_chain: { inline_string: 'a' }, private_key: { inline_string: 'b' } } },
            { name: 'twice', tls_certificate: { certificate_chain: { inline_string: 'a' }, private_key: { inline_string: 'b' } } },
          ],
        },
      }),
      /static_resources\.secrets\[1\]\.name: Duplicate static TlsCertificate secret name twice/,
    ],
  ];
  for (const [what, config, error] of cases) {
    test(`${what} is refused with exit 1, for validate and serve alike`, async () => {
      const dir = makeTempDir();
      try {
        const configPath = path.join(dir, 'bootstrap.json');
        fs.writeFileSync(configPath, JSON.stringify(config(dir)));
        await assertRefusedAlike(configPath, error);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  test('SDS from a file and a static secret by name validate', async () => {
    const dir = makeTempDir();
    try {
      const ca = makeCa(dir, 'ca', 10);
      const cert = makeLeaf(dir, ca, 'leaf', 'DNS:proxy.example', 10);
      const sdsFile = path.join(dir, 'sds.json');
      pushSecretFile(sdsFile, '1', fileValidationContext('ca', ca));
      const listener = listenerNaming({ name: 'static_cert' });
      (listener.filter_chains[0].transport_socket.typed_config.common_tls_context as Record<string, unknown>)['validation_context_sds_secret_config'] = { name: 'ca', sds_config: { path: sdsFile } };
      const configPath = path.join(dir, 'bootstrap.json');
      fs.writeFileSync(
        configPath,
        JSON.stringify({
          static_resources: {
            secrets: [{ name: 'static_cert', tls_certificate: { certificate_chain: { filename: cert.cert }, private_key: { filename: cert.key } } }],
            listeners: [listener],
            clusters: [localCluster('web', 9)],
          },
        }),
      );
      const proc = spawnProxy(['--mode', 'validate', '-c', configPath, '--disable-hot-restart'], { dir: makeTempDir() });
      const exit = await Promise.race([proc.exited, giveUpAfter(30_000).then(() => null)]);
      await proc.cleanup();
      assert.equal(exit?.code, 0, proc.stderr);
      assert.match(proc.stdout, /OK/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
