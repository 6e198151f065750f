// The start-up warning for an admin reachable beyond loopback that nothing but the network protects.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exposureWarning } from '../../src/admin/exposure_warning';
import type { AdminSecurityConfig, CommonTlsContextConfig } from '../../src/config/model';

const NONE: AdminSecurityConfig = { bearerTokens: [], tls: null, certificateRoles: [], allowedSourceRanges: [] };

function tls(requireClientCertificate: boolean, trustedCa: boolean): AdminSecurityConfig['tls'] {
  const common = {
    tlsParams: { minimumProtocolVersion: 'TLS_AUTO', maximumProtocolVersion: 'TLS_AUTO', cipherSuites: [], ecdhCurves: [] },
    tlsCertificates: [],
    tlsCertificateSdsSecretConfigs: [],
    validationContext: trustedCa
      ? { trustedCa: { kind: 'file', path: '/ca.pem' }, matchSubjectAltNames: [], verifyCertificateSpki: [], verifyCertificateHash: [], crl: null, allowExpiredCertificate: false }
      : null,
    validationContextSdsSecretConfig: null,
    alpnProtocols: [],
  } as unknown as CommonTlsContextConfig;
  return { common, requireClientCertificate, requireSni: false };
}

test('loopback needs no warning; any other address does, unless something but the network decides who calls', () => {
  for (const address of ['127.0.0.1', '127.3.2.1', '::1', '::ffff:127.0.0.1']) assert.equal(exposureWarning(address, 9901, null), null, address);
  for (const address of ['0.0.0.0', '::', '10.1.2.3', 'fd00::1']) {
    assert.match(exposureWarning(address, 9901, null) ?? '', new RegExp(`^admin listener ${address.replace(/\./g, '\\.')}:9901 is reachable beyond this host`), address);
    assert.notEqual(exposureWarning(address, 9901, NONE), null, address);
  }
  const protectedBy: AdminSecurityConfig[] = [
    { ...NONE, bearerTokens: [{ name: 'a', path: '/a', role: 'viewer' }] },
    { ...NONE, allowedSourceRanges: [{ addressPrefix: '10.0.0.0', prefixLen: 8 }] },
    { ...NONE, tls: tls(true, true), certificateRoles: [{ identity: 'san', match: { kind: 'exact', value: 'x', ignoreCase: false }, role: 'admin' }] },
    { ...NONE, tls: tls(true, true) },
  ];
  for (const security of protectedBy) assert.equal(exposureWarning('0.0.0.0', 9901, security), null, JSON.stringify(security));
  // TLS alone encrypts; a client certificate nobody checks against a CA proves nothing.
  for (const security of [{ ...NONE, tls: tls(false, true) }, { ...NONE, tls: tls(true, false) }]) {
    assert.notEqual(exposureWarning('0.0.0.0', 9901, security), null, JSON.stringify(security));
  }
});
