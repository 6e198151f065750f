// GET /certs as Envoy renders it, for a certificate made by openssl at a fixed "now"; the
// expiry gauge's minimum; and DownstreamTlsContext fields this build does not honor refused by path.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { test } from 'node:test';
import { contextCertificates, daysUntilFirstCertExpires, NO_CERTIFICATE_DAYS, renderCerts } from '../../src/admin/certs_handler';
import { checkCapabilities } from '../../src/config/capabilities';
import { FieldError, FieldErrors } from '../../src/config/errors';
import { TlsContext } from '../../src/tls/tls_context';
import { makeCa, makeLeaf } from '../helpers/certificates';
import { makeTempDir } from '../helpers/proxy_process';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

test('certs JSON: inline and file sources, SANs by kind, days truncated, RFC 3339 times', () => {
  const dir = makeTempDir();
  try {
    const ca = makeCa(dir, 'ca', 10);
    const leaf = makeLeaf(dir, ca, 'leaf', 'DNS:a.example,URI:spiffe://a/b,IP:127.0.0.1,DNS:b.example', 30);
    const context = new TlsContext(
      {
        tlsParams: { minimumProtocolVersion: 'TLS_AUTO', maximumProtocolVersion: 'TLS_AUTO', cipherSuites: [], ecdhCurves: [] },
        tlsCertificates: [{ certificateChain: { kind: 'inline', bytes: fs.readFileSync(leaf.cert) }, privateKey: { kind: 'file', path: leaf.key }, password: null }],
        tlsCertificateSdsSecretConfigs: [],
        validationContextSdsSecretConfig: null,
        validationContext: {
          trustedCa: { kind: 'file', path: ca.cert },
          matchSubjectAltNames: [],
          verifyCertificateSpki: [],
          verifyCertificateHash: [],
          crl: null,
          allowExpiredCertificate: false,
        },
        alpnProtocols: [],
      },
      'server',
    );
    const certificate = new X509Certificate(fs.readFileSync(leaf.cert));
    const notAfter = Date.parse(certificate.validTo);
    // Ten and a half days before expiry: 10 whole days.
    const now = notAfter - 10.5 * 24 * 3600 * 1000;
    const iso = (time: string) => new Date(time).toISOString().replace('.000Z', 'Z');
    const caCertificate = new X509Certificate(fs.readFileSync(ca.cert));
    const expected = {
      certificates: [
        {
          ca_cert: [
            {
              path: ca.cert,
              serial_number: caCertificate.serialNumber.toLowerCase(),
              subject_alt_names: [],
              days_until_expiration: '0',
              valid_from: iso(caCertificate.validFrom),
              expiration_time: iso(caCertificate.validTo),
            },
          ],
          cert_chain: [
            {
              path: '<inline>',
              serial_number: certificate.serialNumber.toLowerCase(),
              subject_alt_names: [{ dns: 'a.example' }, { dns: 'b.example' }, { uri: 'spiffe://a/b' }, { ip_address: '127.0.0.1' }],
              days_until_expiration: '10',
              valid_from: iso(certificate.validFrom),
              expiration_time: iso(certificate.validTo),
            },
          ],
        },
      ],
    };
    const body = renderCerts([contextCertificates(context, now)]);
    assert.equal(body, `${JSON.stringify(expected, null, 1)}\n`);
    assert.match(body, /"expiration_time": "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"/);
    // The CA expired 20 days before `now`: the gauge floors at 0, as Envoy's does.
    assert.equal(daysUntilFirstCertExpires([context], now), 0);
    assert.equal(daysUntilFirstCertExpires([context], Date.parse(caCertificate.validTo) - 3 * 24 * 3600 * 1000), 3);
    assert.equal(daysUntilFirstCertExpires([], now), NO_CERTIFICATE_DAYS);
    assert.equal(renderCerts([]), '{\n "certificates": []\n}\n');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('DownstreamTlsContext and filter_chain_match fields this build does not honor are refused by path', () => {
  const tlsContext = {
    '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
    common_tls_context: { tls_certificate_provider_instance: { instance_name: 'p' } },
    session_ticket_keys: { keys: [] },
    require_client_certificate: true,
  };
  const bootstrap = {
    static_resources: {
      listeners: [
        {
          name: 'l',
          filter_chains: [
            {
              filter_chain_match: { server_names: ['a.example'], source_prefix_ranges: [{ address_prefix: '10.0.0.0' }] },
              transport_socket: { name: 'proxy.transport_sockets.tls', typed_config: tlsContext },
            },
          ],
        },
      ],
    },
  };
  assert.throws(
    () => checkCapabilities(bootstrap, builtinExtensions()),
    (e: unknown) => {
      const paths = (e instanceof FieldErrors ? e.all : [e as FieldError]).map((f: FieldError) => f.fieldPath).sort();
      assert.deepEqual(paths, [
        'static_resources.listeners[0].filter_chains[0].filter_chain_match.source_prefix_ranges',
        'static_resources.listeners[0].filter_chains[0].transport_socket.typed_config.common_tls_context.tls_certificate_provider_instance',
        'static_resources.listeners[0].filter_chains[0].transport_socket.typed_config.session_ticket_keys',
      ]);
      return true;
    },
  );
});
