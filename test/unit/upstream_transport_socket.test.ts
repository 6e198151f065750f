// The upstream transport socket's pure parts and configuration checks: which
// transport_socket_matches entry a host gets, Envoy's peer checks on a certificate made here,
// auto_sni's options from a host header, the capability check's refusals by field path, and
// the config-time errors a cluster's TLS context raises.

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { test } from 'node:test';
import { ConfigError, ConfigErrors, FieldError } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import type { CertificateValidationContextConfig } from '../../src/config/model';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore } from '../../src/stats/store';
import { PeerVerifier } from '../../src/tls/peer_verification';
import { ClusterInfo } from '../../src/upstream/worker/cluster_info';
import { transportSocketMatchIndex } from '../../src/upstream/shared/transport_socket_match';
import { silentLogger } from '../helpers/data_plane';
import type { Json } from '../helpers/config_fixtures';
import { TestPki } from '../helpers/test_pki';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { SecretStore } from '../../src/tls/secret_store';

const TLS_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';
const CLUSTER = 'static_resources.clusters[0]';

/** A v3 bootstrap of one STATIC cluster `c` (one endpoint) with `fields`, loaded. */
function load(fields: Json): ReturnType<typeof loadBootstrap> {
  const endpoint = { endpoint: { address: { socket_address: { address: '10.0.0.1', port_value: 443 } } } };
  const cluster = { name: 'c', connect_timeout: '1s', load_assignment: { cluster_name: 'c', endpoints: [{ lb_endpoints: [endpoint] }] }, ...fields };
  return loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify({ static_resources: { clusters: [cluster] } }), bootstrapVersion: 3, allowUnknownStaticFields: false });
}

test('transport_socket_matches: the first matching entry wins, an empty match matches any host, no match falls back', () => {
  const matches = [{ mtls: true, version: 'v2' }, { mtls: true }, {}];
  const meta = (fields: Json): Json => ({ 'proxy.transport_socket_match': fields });
  assert.equal(transportSocketMatchIndex(matches, meta({ mtls: true, version: 'v2', other: 1 })), 0);
  assert.equal(transportSocketMatchIndex(matches, meta({ mtls: true })), 1);
  assert.equal(transportSocketMatchIndex(matches, meta({ mtls: 'true' })), 2);
  assert.equal(transportSocketMatchIndex(matches, {}), 2);
  assert.equal(transportSocketMatchIndex(matches.slice(0, 2), meta({ mtls: false })), -1);
  assert.equal(transportSocketMatchIndex(matches.slice(0, 2), { 'proxy.lb': { mtls: true } }), -1);
  // Values compare as protobuf Values: structs by fields, whatever their order.
  assert.equal(transportSocketMatchIndex([{ a: { x: 1, y: [1, 2] } }], meta({ a: { y: [1, 2], x: 1 } })), 0);
});

function validation(fields: Partial<CertificateValidationContextConfig>): CertificateValidationContextConfig {
  return { trustedCa: null, matchSubjectAltNames: [], verifyCertificateSpki: [], verifyCertificateHash: [], crl: null, allowExpiredCertificate: false, ...fields };
}

test('PeerVerifier: chain, SANs (wildcards, auto_san_validation names), pins and expiry, as Envoy checks them', (t) => {
  const pki = new TestPki();
  t.after(() => pki.cleanup());
  const ca = pki.ca('ca');
  const leaf = pki.leaf('leaf', ca, ['DNS:*.example.test', 'URI:spiffe://cluster/ns/a', 'IP:10.0.0.1']);
  const certificate = new X509Certificate(leaf.cert);
  const peer = { authorized: true, authorizationError: null, certificate };
  const trusted = { kind: 'inline', bytes: ca.cert } as const;

  assert.equal(new PeerVerifier(validation({ trustedCa: trusted }), true).verify(peer), null);
  assert.equal(new PeerVerifier(validation({ trustedCa: trusted }), true).verify({ ...peer, authorized: false, authorizationError: 'UNABLE_TO_GET_ISSUER_CERT' }), 'fail_verify_error');
  assert.equal(new PeerVerifier(validation({ trustedCa: trusted, allowExpiredCertificate: true }), true).verify({ ...peer, authorized: false, authorizationError: 'CERT_HAS_EXPIRED' }), null);
  assert.equal(new PeerVerifier(validation({ trustedCa: trusted }), true).verify({ ...peer, certificate: undefined }), 'fail_verify_no_cert');

  const san = (value: string): PeerVerifier => new PeerVerifier(validation({ trustedCa: trusted, matchSubjectAltNames: [{ kind: 'exact', value, ignoreCase: false }] }), true);
  assert.equal(san('a.example.test').verify(peer), null, 'a wildcard DNS SAN covers one label');
  assert.equal(san('a.b.example.test').verify(peer), 'fail_verify_san');
  assert.equal(san('spiffe://cluster/ns/a').verify(peer), null);
  assert.equal(san('10.0.0.1').verify(peer), null);
  assert.equal(san('other.test').verify(peer), 'fail_verify_san');

  // auto_san_validation's names must match as well as the configured matchers.
  const plain = new PeerVerifier(validation({ trustedCa: trusted }), true);
  assert.equal(plain.verify(peer, ['x.example.test']), null);
  assert.equal(plain.verify(peer, ['example.test']), 'fail_verify_san');
  assert.equal(san('a.example.test').verify(peer, ['other.test']), 'fail_verify_san');

  const hash = certificate.fingerprint256.replaceAll(':', '').toLowerCase();
  assert.equal(new PeerVerifier(validation({ verifyCertificateHash: [hash] }), true).verify(peer), null);
  assert.equal(new PeerVerifier(validation({ verifyCertificateHash: ['00'.repeat(32)] }), true).verify(peer), 'fail_verify_cert_hash');
});

test('auto_sni and auto_san_validation: the options a host header asks for', () => {
  const info = (options: Json | undefined): ClusterInfo => {
    const loaded = load(options === undefined ? {} : { upstream_http_protocol_options: options });
    return new ClusterInfo(loaded.bootstrap.clusters[0], createHeapStatsStore(), new LiveRuntime([]), silentLogger, new SecretStore([]));
  };
  assert.equal(info(undefined).transportSocketOptions('a.test'), null);
  assert.equal(info({}).transportSocketOptions('a.test'), null);
  const both = info({ auto_sni: true, auto_san_validation: true });
  assert.deepEqual(both.transportSocketOptions('a.test:8443'), { serverName: 'a.test', subjectAltNames: ['a.test'], key: 'a.test/a.test' });
  assert.deepEqual(both.transportSocketOptions('[::1]:443'), { serverName: null, subjectAltNames: ['::1'], key: '/::1' });
  assert.deepEqual(info({ auto_sni: true }).transportSocketOptions('10.0.0.1:80'), null);
  assert.deepEqual(info({ auto_sni: true }).transportSocketOptions('b.test'), { serverName: 'b.test', subjectAltNames: [], key: 'b.test/' });
});

function refusedPaths(cluster: Json): string[] {
  try {
    load(cluster);
    return [];
  } catch (e) {
    const all = e instanceof ConfigErrors ? e.all : [e as ConfigError];
    return all.map((f) => f.fieldPath.slice(CLUSTER.length + 1));
  }
}

test('capabilities: the UpstreamTlsContext fields this build does not honor are refused by path', () => {
  const tls = (context: Json): Json => ({ transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: { '@type': TLS_TYPE, ...context } } });
  assert.deepEqual(refusedPaths(tls({ sni: 'a', allow_renegotiation: true, max_session_keys: 2, common_tls_context: { alpn_protocols: ['h2'] } })), []);
  assert.deepEqual(refusedPaths(tls({ common_tls_context: { tls_certificate_provider_instance: { instance_name: 'p' } } })), [
    'transport_socket.typed_config.common_tls_context.tls_certificate_provider_instance',
  ]);
  const combined = { default_validation_context: {}, validation_context_sds_secret_config: { name: 'v', sds_config: { path: '/v.json' } }, validation_context_certificate_provider_instance: { instance_name: 'p' } };
  assert.deepEqual(refusedPaths(tls({ common_tls_context: { combined_validation_context: combined } })), [
    'transport_socket.typed_config.common_tls_context.combined_validation_context.validation_context_certificate_provider_instance',
  ]);
  assert.deepEqual(refusedPaths(tls({ common_tls_context: { validation_context: { trust_chain_verification: 'ACCEPT_UNTRUSTED' } } })), [
    'transport_socket.typed_config.common_tls_context.validation_context.trust_chain_verification',
  ]);
  assert.deepEqual(
    refusedPaths({
      transport_socket_matches: [{ name: 'm', transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: { '@type': TLS_TYPE, common_tls_context: { tls_certificates: [{ private_key_provider: { provider_name: 'p' } }] } } } }],
    }),
    ['transport_socket_matches[0].transport_socket.typed_config.common_tls_context.tls_certificates[0].private_key_provider'],
  );
});

test('a cluster TLS context: Envoy\'s config-time errors, at the field, and unreadable material named', () => {
  const build = (context: Json): void => {
    const loaded = load({ transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: { '@type': TLS_TYPE, ...context } } });
    new ClusterInfo(loaded.bootstrap.clusters[0], createHeapStatsStore(), new LiveRuntime([]), silentLogger, new SecretStore([]));
  };
  const fails = (context: Json, path: string, reason: RegExp): void =>
    assert.throws(() => build(context), (e: unknown) => e instanceof FieldError && e.fieldPath === path && reason.test(e.reason), path);
  const base = 'transport_socket.typed_config.common_tls_context';
  fails({ common_tls_context: { validation_context: { match_subject_alt_names: [{ exact: 'a' }] } } }, `${base}.validation_context.match_subject_alt_names`, /without trusted CA is insecure and not allowed/);
  fails({ common_tls_context: { validation_context: { allow_expired_certificate: true } } }, `${base}.validation_context.allow_expired_certificate`, /always ignored without trusted CA/);
  fails({ common_tls_context: { validation_context: { trusted_ca: { filename: '/nonexistent/ca.pem' } } } }, `${base}.validation_context.trusted_ca`, /cannot read '\/nonexistent\/ca.pem'/);
  fails({ common_tls_context: { validation_context: { trusted_ca: { inline_string: 'not a pem' } } } }, `${base}.validation_context.trusted_ca`, /no PEM certificate found/);
  // Pins alone need no trusted CA.
  build({ common_tls_context: { validation_context: { verify_certificate_hash: ['00'.repeat(32)] } } });
});
