// Who may call the admin (admin_access.ts): the source ranges first, then a bearer token or a
// client certificate's role, then the endpoint's role (endpoint_roles.ts).

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { AccessVerdict, AdminAccess, ClientFacts } from '../../src/admin/admin_access';
import { BearerTokens } from '../../src/admin/bearer_tokens';
import { CertificateRoles } from '../../src/admin/certificate_roles';
import { ENDPOINT_ROLES, requiredRole } from '../../src/admin/endpoint_roles';
import { parseQuery } from '../../src/admin/query';
import { SourceAllowList } from '../../src/admin/source_allow_list';
import type { AdminBearerToken, AdminCertificateRole } from '../../src/config/model';
import { TestPki } from '../helpers/test_pki';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'admin-access-'));
const pki = new TestPki();
after(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  pki.cleanup();
});

const VIEW = 'view-0123456789abcdef';
const OPS = 'ops-0123456789abcdefgh';

function tokens(entries: readonly [string, string, AdminBearerToken['role']][]): BearerTokens {
  return BearerTokens.read(
    entries.map(([name, token, role]) => {
      const file = path.join(dir, `${name}.token`);
      fs.writeFileSync(file, `${token}\n`);
      return { name, path: file, role };
    }),
  );
}

const TOKENS = tokens([
  ['dash', VIEW, 'viewer'],
  ['oncall', OPS, 'operator'],
]);

function client(facts: Partial<ClientFacts>): ClientFacts {
  return { address: '127.0.0.1', authorization: undefined, certificate: undefined, ...facts };
}

function summary(verdict: AccessVerdict): string {
  return verdict.kind === 'allowed' ? `${verdict.caller.identity} ${verdict.caller.role}` : `${verdict.status} ${verdict.reason} ${verdict.identity}: ${verdict.message}`;
}

test('a bearer token names its holder and role; anything else is a 401', () => {
  const access = new AdminAccess(TOKENS, new CertificateRoles([]), null);
  assert.equal(access.authenticates, true);
  const cases: [string | undefined, string][] = [
    [`Bearer ${VIEW}`, 'token:dash viewer'],
    [`bearer ${OPS}`, 'token:oncall operator'],
    [`Bearer   ${OPS} `, 'token:oncall operator'],
    [undefined, '401 missing_credentials -: authentication required'],
    [`Bearer ${VIEW}x`, '401 invalid_token -: invalid bearer token'],
    [`Bearer ${VIEW.slice(0, -1)}`, '401 invalid_token -: invalid bearer token'],
    [`Basic ${Buffer.from(`dash:${VIEW}`).toString('base64')}`, '401 invalid_token -: invalid bearer token'],
    [`Bearer ${VIEW} ${OPS}`, '401 invalid_token -: invalid bearer token'],
    ['Bearer', '401 invalid_token -: invalid bearer token'],
  ];
  for (const [authorization, expected] of cases) assert.equal(summary(access.authenticate(client({ authorization }))), expected, String(authorization));
});

test('without tokens or certificate roles there is no authentication: whoever passes the source ranges may do anything', () => {
  const open = new AdminAccess(tokens([]), new CertificateRoles([]), null);
  assert.equal(open.authenticates, false);
  assert.equal(summary(open.authenticate(client({}))), '- admin');
  assert.equal(summary(open.authenticate(client({ authorization: 'Bearer whatever' }))), '- admin');
  const ranged = new AdminAccess(tokens([]), new CertificateRoles([]), new SourceAllowList([{ addressPrefix: '10.0.0.0', prefixLen: 8 }]));
  assert.equal(summary(ranged.authenticate(client({ address: '10.200.0.1' }))), '- admin');
  assert.equal(summary(ranged.authenticate(client({ address: '127.0.0.1' }))), '403 source_not_allowed -: source address 127.0.0.1 is not allowed');
});

test('the source ranges come first, before any credential, in both families and for IPv4-mapped clients', () => {
  const list = new SourceAllowList([
    { addressPrefix: '10.0.0.0', prefixLen: 8 },
    { addressPrefix: '192.168.1.7', prefixLen: 32 },
    { addressPrefix: 'fd00::', prefixLen: 8 },
  ]);
  for (const allowed of ['10.0.0.1', '10.255.255.255', '::ffff:10.1.2.3', '192.168.1.7', 'fd12::1']) assert.ok(list.allows(allowed), allowed);
  for (const refused of ['11.0.0.1', '192.168.1.8', '127.0.0.1', '::1', '::ffff:127.0.0.1', 'fe80::1']) assert.ok(!list.allows(refused), refused);
  const access = new AdminAccess(TOKENS, new CertificateRoles([]), list);
  assert.equal(summary(access.authenticate(client({ address: '127.0.0.1', authorization: `Bearer ${OPS}` }))), '403 source_not_allowed -: source address 127.0.0.1 is not allowed');
  assert.equal(summary(access.authenticate(client({ address: '::ffff:10.0.0.9', authorization: `Bearer ${OPS}` }))), 'token:oncall operator');
});

test('a verified client certificate gets the role of the first entry its SAN or subject matches; a token, when sent, decides', () => {
  const ca = pki.ca('roles-ca');
  const ops = new X509Certificate(pki.leaf('ops-client', ca, ['URI:spiffe://example/ops/alice', 'DNS:alice.example']).cert);
  const dash = new X509Certificate(pki.leaf('dashboards', ca, ['DNS:dash.example']).cert);
  const stranger = new X509Certificate(pki.leaf('stranger', ca, ['DNS:stranger.example']).cert);
  const roles: AdminCertificateRole[] = [
    { identity: 'san', match: { kind: 'prefix', value: 'spiffe://example/ops/', ignoreCase: false }, role: 'operator' },
    { identity: 'subject', match: { kind: 'exact', value: 'CN=dashboards', ignoreCase: false }, role: 'viewer' },
    { identity: 'san', match: { kind: 'safe_regex', value: 'alice\\..*', ignoreCase: false }, role: 'admin' },
  ];
  const access = new AdminAccess(TOKENS, new CertificateRoles(roles), null);
  assert.equal(summary(access.authenticate(client({ certificate: ops }))), 'san:spiffe://example/ops/alice operator');
  assert.equal(summary(access.authenticate(client({ certificate: dash }))), 'subject:CN=dashboards viewer');
  assert.equal(summary(access.authenticate(client({ certificate: stranger }))), '403 unknown_certificate subject:CN=stranger: the client certificate has no role here');
  assert.equal(summary(access.authenticate(client({ certificate: stranger, authorization: `Bearer ${VIEW}` }))), 'token:dash viewer');
  assert.equal(summary(access.authenticate(client({ certificate: ops, authorization: 'Bearer wrong-token-0000000' }))), '401 invalid_token -: invalid bearer token');
  const tokensOnly = new AdminAccess(TOKENS, new CertificateRoles([]), null);
  assert.equal(summary(tokensOnly.authenticate(client({ certificate: ops }))), '401 missing_credentials -: authentication required');
});

test('roles: each may do what the one before it may; the endpoint table decides what each needs', () => {
  const access = new AdminAccess(TOKENS, new CertificateRoles([]), null);
  const need = (target: string) => {
    const q = target.indexOf('?');
    return requiredRole(q < 0 ? target : target.slice(0, q), parseQuery(q < 0 ? '' : target.slice(q + 1), false));
  };
  assert.equal(need('/stats'), 'viewer');
  assert.equal(need('/server_info'), 'viewer');
  assert.equal(need('/server_info?format=json'), 'admin');
  assert.equal(need('/config_dump'), 'admin');
  assert.equal(need('/healthcheck/fail'), 'operator');
  assert.equal(need('/quitquitquit'), 'admin');
  // A path the table does not list is closed: only admin may use it.
  assert.equal(need('/some_new_endpoint'), 'admin');
  // The issue's operator endpoints, and nothing more than the operational ones.
  const operator = [...ENDPOINT_ROLES].filter(([, entry]) => entry.role === 'operator').map(([p]) => p);
  for (const p of ['/healthcheck/fail', '/healthcheck/ok', '/logging', '/runtime_modify', '/reset_counters', '/drain_listeners', '/cpuprofiler', '/reopen_logs']) {
    assert.ok(operator.includes(p), p);
  }
  const verdicts = (['viewer', 'operator', 'admin'] as const).map((role) =>
    (['viewer', 'operator', 'admin'] as const).map((required) => access.authorize({ identity: `token:${role}`, role }, required).kind),
  );
  assert.deepEqual(verdicts, [
    ['allowed', 'denied', 'denied'],
    ['allowed', 'allowed', 'denied'],
    ['allowed', 'allowed', 'allowed'],
  ]);
  const refused = access.authorize({ identity: 'token:dash', role: 'viewer' }, 'admin');
  assert.equal(summary(refused), '403 insufficient_role token:dash: role viewer may not use this endpoint (it needs admin)');
});
