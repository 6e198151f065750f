// The DNS client against a real server on loopback: families, CNAMEs, the hosts file, empty
// answers, errors, TCP (forced and after truncation), forged and malformed answers, timeouts,
// refused connections and retries.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { beforeEach, test } from 'node:test';

import { DnsClient } from '../../src/network/dns/dns_client';
import { DnsAbortedError, DnsMalformedResponseError, DnsServerError, DnsTimeoutError, DnsTransportError } from '../../src/network/dns/dns_errors';
import { parseHostsFile } from '../../src/network/dns/hosts_file';
import { FALLBACK_DNS_SERVER, parseResolvConf, searchNames } from '../../src/network/dns/resolv_conf';
import { closedDnsServer, type DnsTestServer, dnsTestServerForFile } from '../helpers/dns_test_server';

const dnsServer = dnsTestServerForFile();
let server: DnsTestServer;
beforeEach(() => {
  server = dnsServer();
});

// The machine's resolv.conf stays out: its search list would add queries.
function client(options: { useTcp?: boolean; timeoutMs?: number; tries?: number; hostsPath?: string; resolvConfPath?: string } = {}): DnsClient {
  return new DnsClient({ servers: [server.address], timeoutMs: 2000, tries: 1, resolvConfPath: '/dev/null', ...options });
}

test('A and AAAA records come back with their TTLs, per lookup family', { timeout: 10_000 }, async () => {
  server.zone.set('both.test', { a: [{ address: '10.0.0.1', ttl: 30 }, { address: '10.0.0.2', ttl: 20 }], aaaa: [{ address: 'fd00::1', ttl: 40 }] });
  server.zone.set('v4only.test', { a: [{ address: '10.0.0.3', ttl: 7 }] });
  const dns = client();
  assert.deepEqual(await dns.resolve('both.test', 'V4_ONLY'), [
    { address: '10.0.0.1', ttlSeconds: 30 },
    { address: '10.0.0.2', ttlSeconds: 20 },
  ]);
  assert.deepEqual(await dns.resolve('both.test', 'V6_ONLY'), [{ address: 'fd00::1', ttlSeconds: 40 }]);
  // AUTO asks for IPv6 first and stops there when it has an answer.
  server.queries.length = 0;
  assert.deepEqual(await dns.resolve('both.test', 'AUTO'), [{ address: 'fd00::1', ttlSeconds: 40 }]);
  assert.deepEqual(server.queries.map((q) => q.type), ['AAAA']);
  // ... and falls back to IPv4 when IPv6 gave nothing.
  server.queries.length = 0;
  assert.deepEqual(await dns.resolve('v4only.test', 'AUTO'), [{ address: '10.0.0.3', ttlSeconds: 7 }]);
  assert.deepEqual(server.queries.map((q) => q.type), ['AAAA', 'A']);
  assert.deepEqual(await dns.resolve('v4only.test', 'V6_ONLY'), []);
  assert.ok(server.queries.every((q) => q.transport === 'udp'));
});

test('a CNAME chain in the answer is followed, the TTL capped by the aliases', { timeout: 10_000 }, async () => {
  server.zone.set('alias.test', { cname: { target: 'middle.test', ttl: 300 } });
  server.zone.set('middle.test', { cname: { target: 'real.test', ttl: 5 } });
  server.zone.set('real.test', { a: [{ address: '10.1.1.1', ttl: 60 }] });
  assert.deepEqual(await client().resolve('alias.test', 'V4_ONLY'), [{ address: '10.1.1.1', ttlSeconds: 5 }]);
});

test('NXDOMAIN and NODATA are empty answers; SERVFAIL and REFUSED are errors', { timeout: 10_000 }, async () => {
  server.zone.set('nodata.test', { aaaa: [{ address: 'fd00::9', ttl: 1 }] });
  server.zone.set('broken.test', { rcode: 'SERVFAIL' });
  server.zone.set('refused.test', { rcode: 'REFUSED' });
  const dns = client();
  assert.deepEqual(await dns.resolve('missing.test', 'V4_ONLY'), []);
  assert.deepEqual(await dns.resolve('nodata.test', 'V4_ONLY'), []);
  await assert.rejects(dns.resolve('broken.test', 'V4_ONLY'), (error: unknown) => error instanceof DnsServerError && error.rcode === 'SERVFAIL');
  await assert.rejects(dns.resolve('refused.test', 'V4_ONLY'), (error: unknown) => error instanceof DnsServerError && error.rcode === 'REFUSED');
});

test('IP literals answer themselves and the hosts file answers before DNS', { timeout: 10_000 }, async () => {
  const dns = client();
  assert.deepEqual(await dns.resolve('192.0.2.7', 'AUTO'), [{ address: '192.0.2.7', ttlSeconds: 0 }]);
  assert.deepEqual(await dns.resolve('2001:db8::7', 'AUTO'), [{ address: '2001:db8::7', ttlSeconds: 0 }]);
  assert.deepEqual(await dns.resolve('192.0.2.7', 'V6_ONLY'), []);
  assert.deepEqual(await dns.resolve('localhost', 'V4_ONLY'), [{ address: '127.0.0.1', ttlSeconds: 0 }]);
  assert.equal(server.count(), 0, 'no query for literals or for a name in /etc/hosts');

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dns-hosts-'));
  try {
    const hostsPath = path.join(dir, 'hosts');
    fs.writeFileSync(hostsPath, '# comment\n10.9.9.9  Web.Example web # trailing\n::1 web\n');
    server.zone.set('web', { a: [{ address: '10.0.0.50', ttl: 5 }] });
    const withFile = client({ hostsPath });
    assert.deepEqual(await withFile.resolve('WEB.example', 'V4_ONLY'), [{ address: '10.9.9.9', ttlSeconds: 0 }]);
    assert.deepEqual(await withFile.resolve('web', 'AUTO'), [{ address: '::1', ttlSeconds: 0 }]);
    assert.equal(server.count(), 0);
    // The file is read on every lookup: an edit applies at once.
    fs.writeFileSync(hostsPath, '');
    assert.deepEqual(await withFile.resolve('web', 'V4_ONLY'), [{ address: '10.0.0.50', ttlSeconds: 5 }]);
    assert.equal(server.count('web'), 1);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('useTcp sends every query over TCP', { timeout: 10_000 }, async () => {
  server.zone.set('tcp.test', { a: [{ address: '10.2.2.2', ttl: 9 }] });
  assert.deepEqual(await client({ useTcp: true }).resolve('tcp.test', 'AUTO'), [{ address: '10.2.2.2', ttlSeconds: 9 }]);
  assert.deepEqual(server.queries, [
    { name: 'tcp.test', type: 'AAAA', transport: 'tcp' },
    { name: 'tcp.test', type: 'A', transport: 'tcp' },
  ]);
});

test('a truncated UDP answer is asked again over TCP', { timeout: 10_000 }, async () => {
  server.zone.set('big.test', { truncateUdp: true, a: [{ address: '10.3.3.3', ttl: 11 }] });
  assert.deepEqual(await client().resolve('big.test', 'V4_ONLY'), [{ address: '10.3.3.3', ttlSeconds: 11 }]);
  assert.deepEqual(server.queries.map((q) => q.transport), ['udp', 'tcp']);
});

test('an answer cut short ends the lookup as malformed, never as an address read past its end', { timeout: 10_000 }, async () => {
  // Two bytes short: the last address has two of its four bytes.
  server.zone.set('cut.test', { cutBytes: 2, a: [{ address: '127.0.0.1', ttl: 5 }], aaaa: [{ address: 'fd00::1', ttl: 5 }] });
  const dns = client({ tries: 2 });
  await assert.rejects(dns.resolve('cut.test', 'V4_ONLY'), DnsMalformedResponseError);
  await assert.rejects(dns.resolve('cut.test', 'V6_ONLY'), DnsMalformedResponseError);
  // Like c-ares's EBADRESP, a malformed answer is not retried.
  assert.equal(server.count('cut.test'), 2);
  // Cut inside the record's fixed fields, or inside its owner name: malformed too.
  server.zone.set('cut.test', { cutBytes: 8, a: [{ address: '127.0.0.1', ttl: 5 }] });
  await assert.rejects(dns.resolve('cut.test', 'V4_ONLY'), DnsMalformedResponseError);
  server.zone.set('cut.test', { cutBytes: 16, a: [{ address: '127.0.0.1', ttl: 5 }] });
  await assert.rejects(dns.resolve('cut.test', 'V4_ONLY'), DnsMalformedResponseError);
});

test('an A record whose data is not 4 bytes, or an AAAA not 16, is malformed', { timeout: 10_000 }, async () => {
  const dns = client();
  for (const length of [0, 3, 5, 6, 16]) {
    server.zone.set('odd.test', { addressLength: length, a: [{ address: '127.0.0.2', ttl: 5 }] });
    await assert.rejects(dns.resolve('odd.test', 'V4_ONLY'), DnsMalformedResponseError, `A with ${length} bytes`);
  }
  for (const length of [4, 15, 17]) {
    server.zone.set('odd.test', { addressLength: length, aaaa: [{ address: 'fd00::2', ttl: 5 }] });
    await assert.rejects(dns.resolve('odd.test', 'V6_ONLY'), DnsMalformedResponseError, `AAAA with ${length} bytes`);
  }
  // The right lengths, written the same way, read as the addresses.
  server.zone.set('odd.test', { addressLength: 4, a: [{ address: '127.0.0.2', ttl: 5 }] });
  assert.deepEqual(await dns.resolve('odd.test', 'V4_ONLY'), [{ address: '127.0.0.2', ttlSeconds: 5 }]);
  server.zone.set('odd.test', { addressLength: 16, aaaa: [{ address: 'fd00::2', ttl: 5 }] });
  assert.deepEqual(await dns.resolve('odd.test', 'V6_ONLY'), [{ address: 'fd00::2', ttlSeconds: 5 }]);
});

test('a TTL with the top bit set reads as 0 (RFC 2181), the largest other one as it is', { timeout: 10_000 }, async () => {
  server.zone.set('ttl.test', { a: [{ address: '10.6.6.6', ttl: 2 ** 31 }] });
  assert.deepEqual(await client().resolve('ttl.test', 'V4_ONLY'), [{ address: '10.6.6.6', ttlSeconds: 0 }]);
  server.zone.set('ttl.test', { a: [{ address: '10.6.6.6', ttl: 2 ** 31 - 1 }] });
  assert.deepEqual(await client().resolve('ttl.test', 'V4_ONLY'), [{ address: '10.6.6.6', ttlSeconds: 2 ** 31 - 1 }]);
});

test('a truncated answer whose TCP retry fails is an error after every try, with no address', { timeout: 10_000 }, async () => {
  server.zone.set('tc.test', { truncateUdp: true, dropTcp: true, a: [{ address: '10.3.3.3', ttl: 11 }] });
  await assert.rejects(client({ tries: 2 }).resolve('tc.test', 'V4_ONLY'), DnsTransportError);
  assert.deepEqual(server.queries.map((q) => q.transport), ['udp', 'tcp', 'udp', 'tcp']);
});

test('a closed port fails every try at once (ECONNREFUSED), not after the timeouts', { timeout: 10_000 }, async () => {
  const closed = await closedDnsServer();
  for (const useTcp of [false, true]) {
    const started = performance.now();
    // c-ares's defaults: 5 s, doubling, 4 tries: 75 s if each try had to time out.
    const dns = new DnsClient({ servers: [closed], useTcp, timeoutMs: 5000, tries: 4, resolvConfPath: '/dev/null' });
    await assert.rejects(dns.resolve('any.test', 'AUTO'), DnsTransportError);
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 2000, `${useTcp ? 'TCP' : 'UDP'} took ${elapsed} ms`);
  }
});

test('answers with the wrong id or question are ignored', { timeout: 10_000 }, async () => {
  server.zone.set('forged.test', { forgeFirst: true, a: [{ address: '10.4.4.4', ttl: 3 }] });
  assert.deepEqual(await client().resolve('forged.test', 'V4_ONLY'), [{ address: '10.4.4.4', ttlSeconds: 3 }]);
  assert.deepEqual(await client({ useTcp: true }).resolve('forged.test', 'V4_ONLY'), [{ address: '10.4.4.4', ttlSeconds: 3 }]);
});

test('a silent server times out after every try, the timeout doubling per round', { timeout: 10_000 }, async () => {
  server.zone.set('slow.test', { silent: true });
  const started = performance.now();
  await assert.rejects(client({ timeoutMs: 100, tries: 3 }).resolve('slow.test', 'V4_ONLY'), DnsTimeoutError);
  const elapsed = performance.now() - started;
  assert.equal(server.count('slow.test'), 3);
  // 100 + 200 + 400 ms.
  assert.ok(elapsed >= 650 && elapsed < 3000, `took ${elapsed} ms`);
});

test('the tries go round the server list; a dead server is skipped', { timeout: 10_000 }, async () => {
  server.zone.set('round.test', { a: [{ address: '10.5.5.5', ttl: 1 }] });
  // Nothing listens on port 9 of 127.0.0.2 for DNS: the first try fails, the second succeeds.
  const dns = new DnsClient({ servers: [{ address: '127.0.0.2', port: 9 }, server.address], timeoutMs: 150, tries: 1 });
  assert.deepEqual(await dns.resolve('round.test', 'V4_ONLY'), [{ address: '10.5.5.5', ttlSeconds: 1 }]);
});

test('an aborted lookup rejects at once and closes its socket', { timeout: 10_000 }, async () => {
  server.zone.set('hang.test', { silent: true });
  const controller = new AbortController();
  const lookup = client({ timeoutMs: 60_000 }).resolve('hang.test', 'V4_ONLY', controller.signal);
  await new Promise((resolve) => setTimeout(resolve, 50));
  controller.abort();
  await assert.rejects(lookup, DnsAbortedError);
});

test('resolv.conf: nameservers with the c-ares fallback, timeout and attempts options', () => {
  assert.deepEqual(parseResolvConf('# x\nnameserver 10.0.0.53\nnameserver fe80::1%eth0 ; y\nnameserver bogus\noptions ndots:2 timeout:2 attempts:3\n'), {
    servers: [
      { address: '10.0.0.53', port: 53 },
      { address: 'fe80::1%eth0', port: 53 },
    ],
    timeoutMs: 2000,
    attempts: 3,
    search: [],
    ndots: 2,
  });
  assert.deepEqual(parseResolvConf('search a.example b.example.\n'), { servers: [FALLBACK_DNS_SERVER], timeoutMs: null, attempts: null, search: ['a.example', 'b.example'], ndots: 1 });
  // The last of `search` and `domain` wins; `domain` names one.
  assert.deepEqual(parseResolvConf('search a.example b.example\ndomain c.example d.example\noptions ndots:0\n').search, ['c.example']);
  assert.equal(parseResolvConf('options ndots:0\n').ndots, 0);
});

test('the search list: ndots decides whether a name is tried as is first or last; a trailing dot only as is', () => {
  const conf = { search: ['svc.local', 'local'], ndots: 1 };
  assert.deepEqual(searchNames('db', conf), ['db.svc.local', 'db.local', 'db']);
  assert.deepEqual(searchNames('db.prod', conf), ['db.prod', 'db.prod.svc.local', 'db.prod.local']);
  assert.deepEqual(searchNames('db.prod', { ...conf, ndots: 2 }), ['db.prod.svc.local', 'db.prod.local', 'db.prod']);
  assert.deepEqual(searchNames('db.', conf), ['db']);
  assert.deepEqual(searchNames('db', { search: [], ndots: 1 }), ['db']);
});

test('a relative name is found in the search domains; SERVFAIL in one moves on, a timeout ends the search', { timeout: 10_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dns-search-'));
  try {
    const resolvConfPath = path.join(dir, 'resolv.conf');
    fs.writeFileSync(resolvConfPath, 'search broken.test svc.test\n');
    server.zone.set('db.broken.test', { rcode: 'SERVFAIL' });
    server.zone.set('db.svc.test', { a: [{ address: '10.0.0.7', ttl: 3 }] });
    const dns = client({ resolvConfPath });
    assert.deepEqual(await dns.resolve('db', 'V4_ONLY'), [{ address: '10.0.0.7', ttlSeconds: 3 }]);
    assert.equal(server.count('db'), 0, 'the name as is comes last, and was not needed');
    // Found nowhere: empty, after the domains and the name as is.
    assert.deepEqual(await dns.resolve('nothing', 'V4_ONLY'), []);
    assert.equal(server.count('nothing'), 1);
    // A server error everywhere is the error.
    server.zone.set('down.broken.test', { rcode: 'SERVFAIL' });
    server.zone.set('down.svc.test', { rcode: 'SERVFAIL' });
    server.zone.set('down', { rcode: 'SERVFAIL' });
    await assert.rejects(dns.resolve('down', 'V4_ONLY'), DnsServerError);
    // A timeout ends the search at once.
    server.zone.set('slow.broken.test', { silent: true });
    server.zone.set('slow.svc.test', { a: [{ address: '10.0.0.8', ttl: 3 }] });
    await assert.rejects(client({ resolvConfPath, timeoutMs: 100 }).resolve('slow', 'V4_ONLY'), DnsTimeoutError);
    assert.equal(server.count('slow.svc.test'), 0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('hosts file: names are case-insensitive and split by family', () => {
  const table = parseHostsFile('127.0.0.1 localhost\n::1 localhost ip6-localhost\nnot-an-ip foo\n');
  assert.deepEqual(table.lookup('LOCALHOST.', 4), ['127.0.0.1']);
  assert.deepEqual(table.lookup('localhost', 6), ['::1']);
  assert.deepEqual(table.lookup('foo', 4), []);
});
