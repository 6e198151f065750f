// /config_dump's redaction (Envoy's MessageUtil::redact): below a field marked sensitive, strings
// read "[redacted]", bytes the same in base64, other scalars go; the rest is untouched.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactSensitive } from '../../src/config/redact';
import { protoSchema } from '../../src/config/schema';

const TLS = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';

test('TLS private keys and SDS secrets are redacted; their neighbours are not', () => {
  const schema = protoSchema();
  const bootstrap = {
    static_resources: {
      clusters: [
        {
          name: 'secure',
          transport_socket: {
            name: 'tls',
            typed_config: {
              '@type': TLS,
              sni: 'example.com',
              common_tls_context: {
                tls_certificates: [{ certificate_chain: { filename: '/etc/cert.pem' }, private_key: { inline_string: 'KEY' }, password: { inline_bytes: 'c2VjcmV0' } }],
              },
            },
          },
        },
      ],
      secrets: [{ name: 'ticket', session_ticket_keys: { keys: [{ filename: '/etc/ticket' }] }, generic_secret: { secret: { inline_string: 'S' } } }],
    },
  };
  const out = redactSensitive(schema, schema.bootstrap, bootstrap) as any;
  const tls = out.static_resources.clusters[0].transport_socket.typed_config;
  assert.equal(tls['@type'], TLS);
  assert.equal(tls.sni, 'example.com');
  assert.deepEqual(tls.common_tls_context.tls_certificates[0], {
    certificate_chain: { filename: '/etc/cert.pem' },
    private_key: { inline_string: '[redacted]' },
    password: { inline_bytes: Buffer.from('[redacted]').toString('base64') },
  });
  assert.deepEqual(out.static_resources.secrets[0], {
    name: 'ticket',
    session_ticket_keys: { keys: [{ filename: '[redacted]' }] },
    generic_secret: { secret: { inline_string: '[redacted]' } },
  });
  // The input is left as it was.
  assert.equal(bootstrap.static_resources.secrets[0]!.generic_secret.secret.inline_string, 'S');
});
