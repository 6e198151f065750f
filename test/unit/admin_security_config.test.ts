// admin.security (proxyext.admin.v3.AdminSecurity): decoded, validated and modelled, each
// mistake refused by field path; the token files and TLS material loaded as a start and
// validate mode load them, with errors that never hold a token.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { adminProtection } from '../../src/admin/admin_protection';
import { ConfigError } from '../../src/config/errors';
import type { JsonObject } from '../../src/config/json';
import { loadBootstrap } from '../../src/config/load';
import { redactSensitive } from '../../src/config/redact';
import { protoSchema } from '../../src/config/schema';
import type { AdminSecurityConfig, Bootstrap } from '../../src/config/model';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { NamingStatsStore } from '../../src/stats/naming_store';
import { SecretStore } from '../../src/tls/secret_store';
import { TestPki } from '../helpers/test_pki';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'admin-security-'));
const pki = new TestPki();
after(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  pki.cleanup();
});

const TOKEN = 'a'.repeat(8) + '0123456789abcdef';

function tokenFile(name: string, content: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

function load(security: Record<string, unknown>, extra: Record<string, unknown> = {}): Bootstrap {
  const bootstrap = { admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, security }, ...extra };
  return loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false }).bootstrap;
}

/** The one error `security` is refused with, as `<field path>: <reason>`. */
function refusal(security: Record<string, unknown>): string {
  try {
    load(security);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return `${error.fieldPath}: ${error.reason}`;
  }
  assert.fail('accepted');
}

function tlsSocket(context: Record<string, unknown>): Record<string, unknown> {
  return {
    name: 'tls',
    typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext', ...context },
  };
}

function protect(security: AdminSecurityConfig): ReturnType<typeof adminProtection> {
  return adminProtection(security, new SecretStore([]), new NamingStatsStore());
}

test('the model: tokens with their roles, certificate roles, source ranges and the TLS context', () => {
  const ca = pki.ca('model-ca');
  const server = pki.leaf('model-server', ca, ['DNS:admin.test']);
  const model = load({
    bearer_tokens: [
      { name: 'dashboards', path: '/etc/proxy/view.token', role: 'VIEWER' },
      { name: 'oncall', path: '/etc/proxy/ops.token', role: 'operator' },
    ],
    transport_socket: tlsSocket({
      common_tls_context: {
        tls_certificates: [{ certificate_chain: { filename: server.certPath }, private_key: { filename: server.keyPath } }],
        validation_context: { trusted_ca: { filename: ca.certPath } },
      },
      require_client_certificate: true,
    }),
    client_certificate_roles: [
      { san: { prefix: 'spiffe://example/ops/' }, role: 'ADMIN' },
      { subject: { exact: 'CN=dash,O=Example' }, role: 'VIEWER' },
    ],
    allowed_source_ranges: [{ address_prefix: '10.0.0.0', prefix_len: 8 }, { address_prefix: '::1', prefix_len: 128 }],
  });
  const security = model.admin!.security!;
  assert.deepEqual(security.bearerTokens, [
    { name: 'dashboards', path: '/etc/proxy/view.token', role: 'viewer' },
    { name: 'oncall', path: '/etc/proxy/ops.token', role: 'operator' },
  ]);
  assert.deepEqual(security.certificateRoles, [
    { identity: 'san', match: { kind: 'prefix', value: 'spiffe://example/ops/', ignoreCase: false }, role: 'admin' },
    { identity: 'subject', match: { kind: 'exact', value: 'CN=dash,O=Example', ignoreCase: false }, role: 'viewer' },
  ]);
  assert.deepEqual(security.allowedSourceRanges, [
    { addressPrefix: '10.0.0.0', prefixLen: 8 },
    { addressPrefix: '::1', prefixLen: 128 },
  ]);
  assert.equal(security.tls?.requireClientCertificate, true);
  assert.equal(security.tls?.common.validationContext?.trustedCa?.kind, 'file');
});

test('without security the admin has none, as in Envoy', () => {
  const model = loadBootstrap({
    extensions: builtinExtensions(),
    configYaml: JSON.stringify({ admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 0 } } } }),
    allowUnknownStaticFields: false,
  }).bootstrap;
  assert.equal(model.admin!.security, null);
});

test('each mistake is refused at its field path', () => {
  const token = (extra: Record<string, unknown>) => ({ name: 't', path: '/x', role: 'VIEWER', ...extra });
  const cases: [Record<string, unknown>, string][] = [
    [{ bearer_tokens: [token({ role: undefined })] }, 'admin.security.bearer_tokens[0].role: a role is required: VIEWER, OPERATOR or ADMIN'],
    [{ bearer_tokens: [token({ role: 'ROOT' })] }, 'admin.security.bearer_tokens[0].role'],
    [{ bearer_tokens: [token({ path: '' })] }, 'admin.security.bearer_tokens[0].path: value length must be at least 1'],
    [{ bearer_tokens: [token({}), token({ path: '/y' })] }, "admin.security.bearer_tokens[1].name: duplicate token name 't' (bearer_tokens[0])"],
    [{ bearer_tokens: [token({ name: 'two words' })] }, "admin.security.bearer_tokens[0].name: 'two words' is not a plain name"],
    [{ bearer_tokens: [token({ token: 'inline' })] }, 'admin.security.bearer_tokens[0].token: unknown field'],
    [{ allowed_source_ranges: [{ address_prefix: '10.0.0.0', prefix_len: 33 }] }, 'admin.security.allowed_source_ranges[0].prefix_len: 33 is longer than an IPv4 address'],
    [{ allowed_source_ranges: [{ address_prefix: 'localhost', prefix_len: 8 }] }, 'admin.security.allowed_source_ranges[0].address_prefix: malformed IP address: localhost'],
    [{ client_certificate_roles: [{ san: { exact: 'a' }, role: 'ADMIN' }] }, 'admin.security.client_certificate_roles: client certificates need transport_socket'],
    [{ client_certificate_roles: [{ role: 'ADMIN' }] }, 'admin.security.client_certificate_roles[0]'],
    [{ transport_socket: { name: 'raw_buffer', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer' } } }, 'admin.security.transport_socket.name: the admin listener takes proxy.transport_sockets.tls only'],
    [
      { transport_socket: tlsSocket({ common_tls_context: { tls_certificate_sds_secret_configs: [{ name: 'admin', sds_config: { path: '/sds.yaml' } }] } }) },
      'admin.security.transport_socket.typed_config.common_tls_context.tls_certificate_sds_secret_configs[0].sds_config: the admin listener takes its TLS material inline or from static_resources.secrets, not from SDS',
    ],
    [{ transport_socket: tlsSocket({ session_timeout: '10s' }) }, 'admin.security.transport_socket.typed_config.session_timeout'],
  ];
  for (const [security, expected] of cases) {
    const actual = refusal(security);
    assert.ok(actual.startsWith(expected), `${JSON.stringify(security)}:\n  got      ${actual}\n  expected ${expected}`);
  }
});

test('security without an admin address is refused: there is no listener to secure', () => {
  assert.throws(
    () => loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify({ admin: { security: {} } }), allowUnknownStaticFields: false }),
    (error: ConfigError) => error.fieldPath === 'admin.security' && /no admin listener/.test(error.reason),
  );
});

test('token files load; each problem names the file, never the token', () => {
  const good = tokenFile('good.token', `${TOKEN}\n`);
  assert.doesNotThrow(() => protect(load({ bearer_tokens: [{ name: 'a', path: good, role: 'ADMIN' }] }).admin!.security!));
  const secret = 'short-secret';
  const cases: [string, RegExp][] = [
    [path.join(dir, 'missing.token'), /^admin\.security\.bearer_tokens\[0\]\.path: cannot read the token file: ENOENT/],
    [tokenFile('short.token', secret), /^admin\.security\.bearer_tokens\[0\]\.path: the token in .*short\.token is shorter than 16 characters$/],
    [tokenFile('spaces.token', `${secret} and more words\n`), /^admin\.security\.bearer_tokens\[0\]\.path: .*spaces\.token must hold one token of visible ASCII characters, without spaces$/],
    [tokenFile('empty.token', ''), /^admin\.security\.bearer_tokens\[0\]\.path: .*empty\.token must hold one token/],
  ];
  for (const [file, expected] of cases) {
    const security = load({ bearer_tokens: [{ name: 'a', path: file, role: 'ADMIN' }] }).admin!.security!;
    assert.throws(() => protect(security), (error: Error) => {
      assert.match(error.message, expected);
      assert.ok(!error.message.includes(secret), error.message);
      return true;
    });
  }
  const again = tokenFile('again.token', TOKEN);
  const twice = load({ bearer_tokens: [{ name: 'a', path: good, role: 'ADMIN' }, { name: 'b', path: again, role: 'VIEWER' }] }).admin!.security!;
  assert.throws(() => protect(twice), (error: Error) => {
    assert.match(error.message, /^admin\.security\.bearer_tokens\[1\]\.path: .*again\.token holds the same token as bearer_tokens\[0\]$/);
    assert.ok(!error.message.includes(TOKEN));
    return true;
  });
});

test('certificate roles need a trusted CA to verify the certificates they name', () => {
  const ca = pki.ca('noca-ca');
  const server = pki.leaf('noca-server', ca, ['DNS:admin.test']);
  const certificates = { tls_certificates: [{ certificate_chain: { filename: server.certPath }, private_key: { filename: server.keyPath } }] };
  const roles = [{ san: { exact: 'spiffe://example/ops' }, role: 'ADMIN' }];
  const without = load({ transport_socket: tlsSocket({ common_tls_context: certificates }), client_certificate_roles: roles }).admin!.security!;
  assert.throws(() => protect(without), /admin\.security\.client_certificate_roles: client certificates can be mapped to roles only when transport_socket verifies them against a trusted_ca$/);
  const withCa = load({
    transport_socket: tlsSocket({ common_tls_context: { ...certificates, validation_context: { trusted_ca: { filename: ca.certPath } } } }),
    client_certificate_roles: roles,
  }).admin!.security!;
  assert.notEqual(protect(withCa).tls, null);
  const missingKey = load({
    transport_socket: tlsSocket({ common_tls_context: { tls_certificates: [{ certificate_chain: { filename: server.certPath }, private_key: { filename: path.join(dir, 'nope.key') } }] } }),
  }).admin!.security!;
  assert.throws(() => protect(missingKey), /admin\.security\.transport_socket\.typed_config\.common_tls_context\.tls_certificates\[0\]\.private_key: /);
});

test("/config_dump's redaction reaches the admin's TLS context: an inline private key is [redacted]", () => {
  const schema = protoSchema();
  const bootstrap = {
    admin: { security: { transport_socket: tlsSocket({ common_tls_context: { tls_certificates: [{ certificate_chain: { inline_string: 'CERT' }, private_key: { inline_string: 'KEY' } }] } }) } },
  };
  const dumped = JSON.stringify(redactSensitive(schema, schema.bootstrap, bootstrap as unknown as JsonObject));
  assert.match(dumped, /"private_key":\{"inline_string":"\[redacted\]"\}/);
  assert.match(dumped, /"certificate_chain":\{"inline_string":"CERT"\}/);
});
