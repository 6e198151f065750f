// admin.security on a real proxy: every role against every endpoint (from the one table the
// server enforces), bearer tokens that appear in no log, dump or answer, the source ranges,
// client certificates mapped to roles over TLS (and reloaded from disk), validate mode, and the
// start-up warning for an admin open beyond loopback.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { X509Certificate } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import * as path from 'node:path';
import { test } from 'node:test';
import type * as tls from 'node:tls';
import { ENDPOINT_ROLES, requiredRole, roleAllows } from '../../src/admin/endpoint_roles';
import { parseQuery } from '../../src/admin/query';
import type { AdminRole } from '../../src/config/model';
import { makeTempDir, request, RunningProxy, spawnProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { KeyPair, TestPki } from '../helpers/test_pki';

const ROLES: readonly AdminRole[] = ['viewer', 'operator', 'admin'];
/** One token per role, long and random-looking, so that a search for it in a log means a leak. */
const TOKENS: Readonly<Record<AdminRole, string>> = {
  viewer: 'v13w3r-9f8e7d6c5b4a39281706f5e4d3c2b1a0',
  operator: '0p3r4t0r-a1b2c3d4e5f60718293a4b5c6d7e8f90',
  admin: '4dm1n-ffeeddccbbaa99887766554433221100',
};

function bearer(role: AdminRole): http.OutgoingHttpHeaders {
  return { authorization: `Bearer ${TOKENS[role]}` };
}

/** admin.security with one token file per role, written to `dir`. */
function tokenSecurity(dir: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    bearer_tokens: ROLES.map((role) => {
      const file = path.join(dir, `${role}.token`);
      fs.writeFileSync(file, `${TOKENS[role]}\n`, { mode: 0o600 });
      return { name: `${role}-token`, path: file, role: role.toUpperCase() };
    }),
    ...extra,
  };
}

function adminBlock(dir: string, security: Record<string, unknown>, address = '127.0.0.1'): Record<string, unknown> {
  return { access_log_path: path.join(dir, 'admin_access.log'), address: { socket_address: { address, port_value: 0 } }, security };
}

/** A proxy with no listeners, its admin secured by `security(dir)`; the helper's own admin requests carry the admin token. */
async function securedProxy(security: (dir: string) => Record<string, unknown>, args: readonly string[] = []): Promise<{ proxy: RunningProxy; dir: string }> {
  const dir = makeTempDir();
  try {
    const proxy = await startProxy({ admin: adminBlock(dir, security(dir)), static_resources: {} }, ['--file-flush-interval-msec', '50', ...args], 15_000, {}, bearer('admin'));
    return { proxy, dir };
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

function requestTarget(target: string): { path: string; role: AdminRole } {
  const q = target.indexOf('?');
  const p = q < 0 ? target : target.slice(0, q);
  return { path: p, role: requiredRole(p, parseQuery(q < 0 ? '' : target.slice(q + 1), false)) };
}

test('every role against every endpoint: the table decides, and the table covers every endpoint', { timeout: 120_000 }, async () => {
  const { proxy, dir } = await securedProxy((d) => tokenSecurity(d));
  try {
    const help = (await proxy.admin('/help')).body;
    const served = help
      .split('\n')
      .slice(1)
      .filter((line) => line !== '')
      .map((line) => line.trim().split(':')[0]!);
    assert.deepEqual([...served].sort(), [...ENDPOINT_ROLES.keys()].sort(), 'the role table lists exactly the endpoints /help does');

    const mutations = new Set(['/quitquitquit', ...[...ENDPOINT_ROLES].filter(([, e]) => e.role === 'operator').map(([p]) => p)]);
    // Every endpoint, the reads that need more with a query too; /quitquitquit last, since admin's ends the run.
    const targets = [...ENDPOINT_ROLES.keys(), '/server_info?format=json'].sort((a, b) => Number(a === '/quitquitquit') - Number(b === '/quitquitquit'));
    let refusals = 0;
    for (const target of targets) {
      const { path: p, role: needed } = requestTarget(target);
      for (const role of ROLES) {
        if (p === '/quitquitquit' && role === 'admin') continue;
        const method = mutations.has(p) ? 'POST' : 'GET';
        const reply = await request(`${proxy.adminUrl}${target}`, { method, headers: bearer(role) });
        if (roleAllows(role, needed)) {
          assert.ok(reply.status !== 401 && reply.status !== 403, `${role} ${method} ${target}: ${reply.status} ${reply.body}`);
        } else {
          refusals++;
          assert.equal(reply.status, 403, `${role} ${method} ${target}`);
          assert.equal(reply.body, `role ${role} may not use this endpoint (it needs ${needed})\n`);
        }
      }
      const anonymous = await request(`${proxy.adminUrl}${target}`, { method: mutations.has(p) ? 'POST' : 'GET' });
      assert.equal(anonymous.status, 401, `anonymous ${target}`);
    }
    // The viewer refused the 12 operator endpoints; viewer and operator the 3 admin targets
    // (/config_dump, /server_info?format=json, /quitquitquit). A change of the table shows here.
    assert.equal(refusals, 12 + 3 * 2);
    const quit = await request(`${proxy.adminUrl}/quitquitquit`, { method: 'POST', headers: bearer('admin') });
    assert.equal(quit.status, 200);
    assert.deepEqual(await proxy.exited, { code: 0, signal: null });
  } finally {
    await proxy.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('tokens: 401 without or with a wrong one, counted by reason; no token in any log, dump or answer', { timeout: 60_000 }, async () => {
  const { proxy, dir } = await securedProxy((d) => tokenSecurity(d), ['--component-log-level', 'admin:debug,http:debug']);
  try {
    const missing = await request(`${proxy.adminUrl}/stats`);
    assert.equal(missing.status, 401);
    assert.equal(missing.body, 'authentication required\n');
    assert.equal(missing.headers['www-authenticate'], 'Bearer realm="proxy admin"');
    const wrong = await request(`${proxy.adminUrl}/stats`, { headers: { authorization: `Bearer ${TOKENS.admin}0` } });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body, 'invalid bearer token\n');
    const basic = await request(`${proxy.adminUrl}/stats`, { headers: { authorization: `Basic ${Buffer.from(`admin:${TOKENS.admin}`).toString('base64')}` } });
    assert.equal(basic.status, 401);
    const role = await request(`${proxy.adminUrl}/config_dump`, { headers: bearer('operator') });
    assert.equal(role.status, 403);
    // An unknown path is a 404 for a caller, a 401 for anyone else: the help text is not for strangers.
    assert.equal((await request(`${proxy.adminUrl}/nope`)).status, 401);
    assert.equal((await request(`${proxy.adminUrl}/nope`, { headers: bearer('viewer') })).status, 404);
    assert.equal((await request(`${proxy.adminUrl}/favicon.ico`)).status, 401);

    const stats = (await proxy.admin('/stats?filter=auth_denied')).body;
    assert.equal(
      stats,
      [
        'http.admin.auth_denied: 6',
        'http.admin.auth_denied.insufficient_role: 1',
        'http.admin.auth_denied.invalid_token: 2',
        'http.admin.auth_denied.missing_credentials: 3',
        'http.admin.auth_denied.source_not_allowed: 0',
        'http.admin.auth_denied.unknown_certificate: 0',
        '',
      ].join('\n'),
    );
    const prometheus = (await proxy.admin('/stats/prometheus')).body;
    assert.match(prometheus, /^proxy_http_auth_denied_invalid_token\{proxy_http_conn_manager_prefix="admin"\} 2$/m);
    assert.match(prometheus, /^proxy_http_auth_denied\{proxy_http_conn_manager_prefix="admin"\} 6$/m);

    const dump = await proxy.admin('/config_dump');
    assert.equal(dump.status, 200);
    assert.match(dump.body, /"bearer_tokens"/);
    const serverInfo = await proxy.admin('/server_info?format=json');
    await waitFor('the access log lines', () => {
      const log = fs.readFileSync(path.join(dir, 'admin_access.log'), 'utf8');
      return log.includes('"GET /server_info?format=json HTTP/1.1" 200') ? log : undefined;
    });
    const accessLog = fs.readFileSync(path.join(dir, 'admin_access.log'), 'utf8');
    assert.match(accessLog, /"GET \/stats HTTP\/1\.1" 401 .* "-"\n/);
    assert.match(accessLog, /"GET \/config_dump HTTP\/1\.1" 403 .* "token:operator-token"\n/);
    assert.match(accessLog, /"GET \/config_dump HTTP\/1\.1" 200 .* "token:admin-token"\n/);
    // The debug header dump says a credential came, never which.
    assert.match(proxy.stderr, /'authorization', '\[redacted\]'/);
    const everything = [proxy.stdout, proxy.stderr, accessLog, dump.body, serverInfo.body, missing.body, wrong.body, basic.body, role.body, stats, prometheus];
    for (const token of Object.values(TOKENS)) {
      for (const text of everything) assert.ok(!text.includes(token) && !text.includes(token.slice(0, 12)), 'a token leaked');
    }
  } finally {
    await proxy.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('source ranges: a client outside them is refused before any credential, and counted', { timeout: 60_000 }, async () => {
  const { proxy, dir } = await securedProxy((d) => tokenSecurity(d, { allowed_source_ranges: [{ address_prefix: '127.0.0.1', prefix_len: 32 }] }));
  try {
    const from = (localAddress: string, headers: http.OutgoingHttpHeaders) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const url = new URL(`${proxy.adminUrl}/stats?filter=auth_denied`);
        // Any 127.x address is this host's: the client picks its source.
        const r = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, localAddress, headers, agent: false, timeout: 5000 }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        r.on('timeout', () => r.destroy(new Error('timed out')));
        r.on('error', reject);
        r.end();
      });
    const outside = await from('127.0.0.2', bearer('admin'));
    assert.equal(outside.status, 403);
    assert.equal(outside.body, 'source address 127.0.0.2 is not allowed\n');
    const inside = await from('127.0.0.1', bearer('admin'));
    assert.equal(inside.status, 200);
    assert.match(inside.body, /^http\.admin\.auth_denied\.source_not_allowed: 1$/m);
    // Inside the ranges the credentials still count.
    assert.equal((await from('127.0.0.1', {})).status, 401);
  } finally {
    await proxy.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

interface TlsReply {
  readonly status: number;
  readonly body: string;
  readonly serverSerial: string;
}

function tlsRequest(port: number, target: string, options: { method?: string; client?: KeyPair; ca: Buffer; headers?: http.OutgoingHttpHeaders }): Promise<TlsReply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: target,
        method: options.method ?? 'GET',
        ca: options.ca,
        cert: options.client?.cert,
        key: options.client?.key,
        headers: options.headers,
        agent: false,
        timeout: 5000,
      },
      (res) => {
        const serverSerial = (res.socket as tls.TLSSocket).getPeerX509Certificate()?.serialNumber ?? '';
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, serverSerial }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

test('mTLS: client certificates mapped to roles by SAN or subject, tokens beside them, certificates reloaded from disk', { timeout: 90_000 }, async () => {
  const pki = new TestPki();
  const dir = makeTempDir();
  const proc = (() => {
    const ca = pki.ca('admin-ca');
    const server = pki.leaf('admin-server', ca, ['IP:127.0.0.1']);
    // The files the admin reads, replaced below to rotate its certificate.
    const certPath = path.join(dir, 'admin.pem');
    const keyPath = path.join(dir, 'admin.key');
    fs.copyFileSync(server.certPath, certPath);
    fs.copyFileSync(server.keyPath, keyPath);
    const security = tokenSecurity(dir, {
      transport_socket: {
        name: 'proxy.transport_sockets.tls',
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
          common_tls_context: {
            tls_certificates: [{ certificate_chain: { filename: certPath }, private_key: { filename: keyPath } }],
            validation_context: { trusted_ca: { filename: ca.certPath } },
          },
        },
      },
      client_certificate_roles: [
        { san: { prefix: 'spiffe://example/ops/' }, role: 'OPERATOR' },
        { subject: { exact: 'CN=dashboards' }, role: 'VIEWER' },
      ],
    });
    const configPath = path.join(dir, 'bootstrap.json');
    fs.writeFileSync(configPath, JSON.stringify({ admin: adminBlock(dir, security), static_resources: {} }));
    const addressPath = path.join(dir, 'admin_address');
    return { ca, certPath, keyPath, configPath, addressPath, proxy: spawnProxy(['-c', configPath, '--admin-address-path', addressPath, '--disable-hot-restart', '--concurrency', '1'], { dir }) };
  })();
  const { ca, proxy } = proc;
  try {
    const address = await waitFor('the admin address', () => {
      if (proxy.child.exitCode !== null) throw new Error(`proxy exited: ${proxy.stderr}`);
      const written = fs.existsSync(proc.addressPath) ? fs.readFileSync(proc.addressPath, 'utf8') : '';
      return written === '' ? undefined : written;
    });
    const port = Number(address.slice(address.lastIndexOf(':') + 1));
    const ops = pki.leaf('ops-client', ca, ['URI:spiffe://example/ops/alice']);
    const dashboards = pki.leaf('dashboards', ca, ['DNS:dash.example']);
    const stranger = pki.leaf('stranger', ca, ['DNS:stranger.example']);
    const otherCa = pki.ca('other-ca');
    const forged = pki.leaf('forged', otherCa, ['URI:spiffe://example/ops/mallory']);
    await waitFor('/ready over TLS', async () => ((await tlsRequest(port, '/ready', { ca: ca.cert, headers: bearer('viewer') })).status === 200 ? true : undefined));

    const call = (target: string, client: KeyPair | undefined, method = 'GET', headers: http.OutgoingHttpHeaders = {}) => tlsRequest(port, target, { ca: ca.cert, client, method, headers });
    assert.equal((await call('/healthcheck/ok', ops, 'POST')).status, 200);
    const opsQuit = await call('/quitquitquit', ops, 'POST');
    assert.deepEqual([opsQuit.status, opsQuit.body], [403, 'role operator may not use this endpoint (it needs admin)\n']);
    assert.equal((await call('/stats', dashboards)).status, 200);
    assert.equal((await call('/reset_counters', dashboards, 'POST')).status, 403);
    const strange = await call('/stats', stranger);
    assert.deepEqual([strange.status, strange.body], [403, 'the client certificate has no role here\n']);
    // A token decides over the certificate it comes with.
    assert.equal((await call('/config_dump', stranger, 'GET', bearer('admin'))).status, 200);
    assert.equal((await call('/stats', undefined)).status, 401);
    assert.equal((await call('/stats', undefined, 'GET', bearer('viewer'))).status, 200);
    // A certificate no trusted CA signed never gets to HTTP; its connection counts all the same, from its accept.
    const connections = async () => Number(/^listener\.admin\.downstream_cx_total: (\d+)$/m.exec((await call('/stats?filter=downstream_cx_total', undefined, 'GET', bearer('viewer'))).body)![1]);
    const accepted = await connections();
    await assert.rejects(call('/stats', forged));
    assert.equal(await connections(), accepted + 2);
    // Plain HTTP to the TLS port gets nothing.
    await assert.rejects(request(`http://127.0.0.1:${port}/stats`, { headers: bearer('admin') }));

    const stats = (await call('/stats?filter=^(listener\\.admin\\.ssl|http\\.admin\\.auth_denied)', undefined, 'GET', bearer('admin'))).body;
    assert.match(stats, /^http\.admin\.auth_denied\.insufficient_role: 2$/m);
    assert.match(stats, /^http\.admin\.auth_denied\.unknown_certificate: 1$/m);
    assert.match(stats, /^http\.admin\.auth_denied\.missing_credentials: 1$/m);
    assert.match(stats, /^listener\.admin\.ssl\.fail_verify_error: 1$/m);
    const certs = (await call('/certs', undefined, 'GET', bearer('viewer'))).body;
    assert.ok(certs.includes(proc.certPath), 'the admin certificate is in /certs');

    // Rotation: the files replaced (written aside, then renamed in), the next connection gets the new certificate.
    const before = (await call('/ready', ops)).serverSerial;
    const rotated = pki.leaf('admin-server-2', ca, ['IP:127.0.0.1']);
    fs.copyFileSync(rotated.keyPath, `${proc.keyPath}.new`);
    fs.copyFileSync(rotated.certPath, `${proc.certPath}.new`);
    fs.renameSync(`${proc.keyPath}.new`, proc.keyPath);
    fs.renameSync(`${proc.certPath}.new`, proc.certPath);
    const after = await waitFor('the rotated certificate', async () => {
      const serial = (await call('/ready', ops)).serverSerial;
      return serial !== before ? serial : undefined;
    });
    assert.equal(after, new X509Certificate(rotated.cert).serialNumber);
  } finally {
    await proxy.cleanup();
    pki.cleanup();
  }
});

test('validate mode loads the token files: a missing one is an error at its field path, exit 1', { timeout: 30_000 }, async () => {
  const dir = makeTempDir();
  const security = tokenSecurity(dir);
  (security.bearer_tokens as { path: string }[])[1]!.path = path.join(dir, 'gone.token');
  const configPath = path.join(dir, 'bootstrap.json');
  fs.writeFileSync(configPath, JSON.stringify({ admin: adminBlock(dir, security), static_resources: {} }));
  const run = spawnProxy(['-c', configPath, '--mode', 'validate'], { dir });
  try {
    const exit = await run.exited;
    assert.equal(exit.code, 1);
    assert.match(run.stderr + run.stdout, /admin\.security\.bearer_tokens\[1\]\.path: cannot read the token file: ENOENT: no such file or directory, open '.*gone\.token'/);
    for (const token of Object.values(TOKENS)) assert.ok(!(run.stderr + run.stdout).includes(token));
  } finally {
    await run.cleanup();
  }
});

test('an admin bound beyond loopback with no protection warns once at start; with tokens, or on loopback, it does not', { timeout: 60_000 }, async () => {
  const WARNING = /is reachable beyond this host and has no bearer tokens, client certificates or source ranges/g;
  const cases: [string, (dir: string) => Record<string, unknown> | undefined, number][] = [
    ['0.0.0.0', () => undefined, 1],
    ['0.0.0.0', (d) => tokenSecurity(d), 0],
    ['127.0.0.1', () => undefined, 0],
  ];
  for (const [address, security, warnings] of cases) {
    const dir = makeTempDir();
    const admin = { ...adminBlock(dir, {}, address), security: security(dir) };
    if (admin.security === undefined) delete (admin as { security?: unknown }).security;
    const proxy = await startProxy({ admin, static_resources: {} }, [], 15_000, {}, bearer('admin'));
    try {
      assert.equal([...proxy.stderr.matchAll(WARNING)].length, warnings, `${address}: ${proxy.stderr}`);
    } finally {
      await proxy.cleanup();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});
