// A TLS context that names its certificate and validation context as secrets: static ones are
// found by name and kind, an SDS one makes the context wait (no material) until the store has
// it and reload when it is replaced, a combined validation context merges the SDS one into its
// default (checkWith refuses one that would not hold), and checkSecret refuses, by field, what a
// context could not load.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { test } from 'node:test';
import { FieldError } from '../../src/config/errors';
import type { CertificateValidationContextConfig, CommonTlsContextConfig, SdsSecretConfig, TlsCertificateConfig } from '../../src/config/model';
import { secretKey, type SecretSource, SecretStore } from '../../src/tls/secret_store';
import { checkSecret, TlsContext } from '../../src/tls/tls_context';
import { makeCa, makeLeaf } from '../helpers/certificates';
import { makeTempDir } from '../helpers/proxy_process';

const SDS: SdsSecretConfig = { name: 'cert', sdsConfig: { kind: 'path', path: '/sds.json', initialFetchTimeoutMs: 15_000, resourceApiVersion: 'V3' } };

function common(overrides: Partial<CommonTlsContextConfig>): CommonTlsContextConfig {
  return {
    tlsParams: { minimumProtocolVersion: 'TLS_AUTO', maximumProtocolVersion: 'TLS_AUTO', cipherSuites: [], ecdhCurves: [] },
    tlsCertificates: [],
    tlsCertificateSdsSecretConfigs: [],
    validationContext: null,
    validationContextSdsSecretConfig: null,
    alpnProtocols: [],
    ...overrides,
  };
}

function certificate(files: { cert: string; key: string }): TlsCertificateConfig {
  return { certificateChain: { kind: 'file', path: files.cert }, privateKey: { kind: 'file', path: files.key }, password: null };
}

function validation(overrides: Partial<CertificateValidationContextConfig>): CertificateValidationContextConfig {
  return { trustedCa: null, matchSubjectAltNames: [], verifyCertificateSpki: [], verifyCertificateHash: [], crl: null, allowExpiredCertificate: false, ...overrides };
}

/** The serial of the context's first certificate (a function: an assertion on certChains would narrow it). */
function servedSerial(context: TlsContext): string {
  return context.certChains[0]!.certificate.serialNumber.toLowerCase();
}

function serial(file: string): string {
  return new X509Certificate(fs.readFileSync(file)).serialNumber.toLowerCase();
}

test('static secrets by name and kind; SDS ones wait, then load, and replace the material when replaced', () => {
  const dir = makeTempDir();
  try {
    const ca = makeCa(dir, 'ca', 10);
    const first = makeLeaf(dir, ca, 'first', 'DNS:a.example', 10);
    const second = makeLeaf(dir, ca, 'second', 'DNS:a.example', 10);
    const store = new SecretStore([
      { name: 'static', value: { kind: 'tls_certificate', tlsCertificate: certificate(first) } },
      { name: 'static', value: { kind: 'validation_context', validationContext: validation({ trustedCa: { kind: 'file', path: ca.cert } }) } },
    ]);
    const fromStatic = new TlsContext(common({ tlsCertificateSdsSecretConfigs: [{ name: 'static', sdsConfig: null }], validationContextSdsSecretConfig: { name: 'static', sdsConfig: null } }), 'server', { secrets: store });
    assert.equal(servedSerial(fromStatic), serial(first.cert));
    assert.equal(fromStatic.caCert?.source.kind, 'file');
    assert.equal(fromStatic.verifier?.verifies, true);

    const dynamic = new TlsContext(common({ tlsCertificateSdsSecretConfigs: [SDS] }), 'server', { secrets: store });
    assert.equal(dynamic.loaded, false);
    assert.equal(dynamic.secureContext, null);
    assert.deepEqual(dynamic.certChains, []);
    // A validation context of the same name and source is another secret.
    store.set({ key: secretKey(SDS, 'validation_context'), value: { kind: 'validation_context', validationContext: validation({}) } });
    assert.equal(dynamic.loaded, false);
    store.set({ key: secretKey(SDS, 'tls_certificate'), value: { kind: 'tls_certificate', tlsCertificate: certificate(first) } });
    assert.equal(dynamic.loaded, true);
    const before = dynamic.secureContext;
    assert.equal(servedSerial(dynamic), serial(first.cert));
    assert.deepEqual(dynamic.files, [first.cert, first.key]);
    store.set({ key: secretKey(SDS, 'tls_certificate'), value: { kind: 'tls_certificate', tlsCertificate: certificate(second) } });
    assert.equal(servedSerial(dynamic), serial(second.cert));
    assert.notEqual(dynamic.secureContext, before);
    // Another secret's change leaves this context's material as it was.
    const current = dynamic.secureContext;
    store.set({ key: 'unrelated', value: { kind: 'tls_certificate', tlsCertificate: certificate(first) } });
    assert.equal(dynamic.secureContext, current);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a combined validation context merges the SDS one into its default', () => {
  const dir = makeTempDir();
  try {
    const ca = makeCa(dir, 'ca', 10);
    const sds: SdsSecretConfig = { ...SDS, name: 'ca' };
    const store = new SecretStore([]);
    const context = new TlsContext(
      common({
        validationContext: validation({ verifyCertificateHash: ['aa'], matchSubjectAltNames: [{ kind: 'exact', value: 'a.example', ignoreCase: false }] }),
        validationContextSdsSecretConfig: sds,
      }),
      'client',
      { secrets: store },
    );
    assert.equal(context.loaded, false);
    store.set({ key: secretKey(sds, 'validation_context'), value: { kind: 'validation_context', validationContext: validation({ trustedCa: { kind: 'file', path: ca.cert }, verifyCertificateHash: ['bb'] }) } });
    assert.equal(context.caCert?.certificate.serialNumber.toLowerCase(), serial(ca.cert));
    // The default's SAN matcher needs a trusted CA (a client's rule): the SDS one supplies it.
    assert.equal(context.verifier?.verifies, true);
    // An SDS validation context without one would not hold: the supervisor's check refuses it.
    const candidate = (value: CertificateValidationContextConfig): SecretSource => ({
      generation: store.generation + 1,
      find: (config, kind) => (kind === 'validation_context' && config.name === 'ca' ? { kind, validationContext: value } : null),
    });
    assert.throws(
      () => context.checkWith(candidate(validation({ verifyCertificateHash: ['cc'] }))),
      (e: unknown) => e instanceof FieldError && e.fieldPath === 'validation_context.match_subject_alt_names',
    );
    context.checkWith(candidate(validation({ trustedCa: { kind: 'file', path: ca.cert } })));
    assert.equal(context.caCert?.certificate.serialNumber.toLowerCase(), serial(ca.cert));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('checkSecret refuses, by field, a key of another certificate and a CA that does not parse', () => {
  const dir = makeTempDir();
  try {
    const ca = makeCa(dir, 'ca', 10);
    const first = makeLeaf(dir, ca, 'first', 'DNS:a.example', 10);
    const second = makeLeaf(dir, ca, 'second', 'DNS:a.example', 10);
    checkSecret({ kind: 'tls_certificate', tlsCertificate: certificate(first) });
    const mismatch = { kind: 'tls_certificate' as const, tlsCertificate: { ...certificate(first), privateKey: { kind: 'file' as const, path: second.key } } };
    assert.throws(() => checkSecret(mismatch), (e: unknown) => e instanceof FieldError && e.fieldPath === 'tls_certificate.private_key');
    const garbage = { kind: 'validation_context' as const, validationContext: validation({ trustedCa: { kind: 'inline', bytes: Buffer.from('no') } }) };
    assert.throws(() => checkSecret(garbage), (e: unknown) => e instanceof FieldError && e.fieldPath === 'validation_context.trusted_ca');
    const missing = { kind: 'tls_certificate' as const, tlsCertificate: certificate({ cert: `${dir}/none.pem`, key: first.key }) };
    assert.throws(() => checkSecret(missing), (e: unknown) => e instanceof FieldError && e.fieldPath === 'tls_certificate.certificate_chain');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
