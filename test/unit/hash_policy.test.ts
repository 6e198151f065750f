import { test } from 'node:test';
import assert from 'node:assert/strict';
import { xxHash64 } from '../../src/common/hash/xxhash64';
import type { HashPolicy } from '../../src/config/model';
import { computeHashKey, cookieValue, generatedCookieValue, type HashedRequest, setCookieValue } from '../../src/filters/http/hash_policy';
import { queryParameter } from '../../src/filters/http/query_string';
import { RouteLoadBalancerContext } from '../../src/filters/http/route_load_balancer_context';
import { RequestHead } from '../../src/http/message';

function head(path: string, headers: [string, string][] = []): RequestHead {
  const h = new RequestHead('GET', path, false);
  h.authority = 'example.com';
  for (const [name, value] of headers) h.headers.push(name, value);
  return h;
}

/** A request whose generated cookies are recorded, with a fixed generated value. */
function request(h: RequestHead, remoteIp = '10.1.2.3'): HashedRequest & { cookies: string[] } {
  const cookies: string[] = [];
  return {
    head: h,
    remoteIp,
    cookies,
    addCookie(name, path, ttl) {
      cookies.push(`${name}|${path}|${ttl}`);
      return 'generated';
    },
  };
}

const rotl1 = (h: bigint): bigint => ((h << 1n) | (h >> 63n)) & 0xffffffffffffffffn;
const header = (name: string, terminal = false): HashPolicy => ({ kind: 'header', name, terminal });

test('each kind hashes its value with xxHash64', () => {
  const h = head('/p?user=alice&x=1', [
    ['x-user', 'bob'],
    ['cookie', 'a=1; sticky="s-1"'],
  ]);
  const r = request(h);
  assert.equal(computeHashKey([header('x-user')], r), xxHash64('bob'));
  assert.equal(computeHashKey([header(':authority')], r), xxHash64('example.com'));
  assert.equal(computeHashKey([header(':path')], r), xxHash64('/p?user=alice&x=1'));
  assert.equal(computeHashKey([{ kind: 'cookie', name: 'sticky', ttlSeconds: null, path: '', terminal: false }], r), xxHash64('s-1'));
  assert.equal(computeHashKey([{ kind: 'source_ip', terminal: false }], r), xxHash64('10.1.2.3'));
  assert.equal(computeHashKey([{ kind: 'query_parameter', name: 'user', terminal: false }], r), xxHash64('alice'));
  assert.deepEqual(r.cookies, []);
});

test('absent values yield no hash; a filter_state key holds nothing hashable in this build', () => {
  const r = request(head('/p'), '');
  assert.equal(computeHashKey([header('x-missing')], r), null);
  assert.equal(computeHashKey([{ kind: 'cookie', name: 'sticky', ttlSeconds: null, path: '', terminal: false }], r), null);
  assert.equal(computeHashKey([{ kind: 'source_ip', terminal: false }], r), null);
  assert.equal(computeHashKey([{ kind: 'query_parameter', name: 'user', terminal: false }], r), null);
  assert.equal(computeHashKey([{ kind: 'filter_state', key: 'proxy.hash', terminal: false }], r), null);
  assert.equal(computeHashKey([], r), null);
});

test('policies combine as rotl64(hash, 1) ^ next, skipping those without a value', () => {
  const r = request(head('/', [['a', 'x'], ['b', 'y'], ['c', 'z']]));
  const a = xxHash64('x');
  const b = xxHash64('y');
  const c = xxHash64('z');
  assert.equal(computeHashKey([header('a'), header('missing'), header('b')], r), rotl1(a) ^ b);
  assert.equal(computeHashKey([header('a'), header('b'), header('c')], r), rotl1(rotl1(a) ^ b) ^ c);
  // The same policy twice does not cancel out.
  assert.equal(computeHashKey([header('a'), header('a')], r), rotl1(a) ^ a);
  assert.notEqual(rotl1(a) ^ a, 0n);
});

test('a terminal policy ends the walk once a hash exists, its own or an earlier one', () => {
  const r = request(head('/', [['a', 'x'], ['b', 'y']]));
  const a = xxHash64('x');
  assert.equal(computeHashKey([header('a', true), header('b')], r), a);
  // Terminal without a value of its own and with no hash before it: the walk goes on.
  assert.equal(computeHashKey([header('missing', true), header('b')], r), xxHash64('y'));
  // Terminal without a value of its own after a hash: the walk stops there.
  assert.equal(computeHashKey([header('a'), header('missing', true), header('b')], r), a);
});

test('a missing cookie with a ttl is generated, hashed, and set; without a ttl it is not', () => {
  const r = request(head('/'));
  const policy: HashPolicy = { kind: 'cookie', name: 'sticky', ttlSeconds: 0, path: '/app', terminal: false };
  assert.equal(computeHashKey([policy], r), xxHash64('generated'));
  assert.deepEqual(r.cookies, ['sticky|/app|0']);
  // An empty value counts as absent.
  const empty = request(head('/', [['cookie', 'sticky=']]));
  assert.equal(computeHashKey([{ ...policy, ttlSeconds: 60 }], empty), xxHash64('generated'));
  assert.deepEqual(empty.cookies, ['sticky|/app|60']);
});

test('cookie parsing: Cookie headers in order, leading spaces, quotes, malformed pairs', () => {
  const h = head('/', [
    ['cookie', 'junk; a=1;  b="two"'],
    ['cookie', 'c=3; a=ignored'],
  ]);
  assert.equal(cookieValue(h, 'a'), '1');
  assert.equal(cookieValue(h, 'b'), 'two');
  assert.equal(cookieValue(h, 'c'), '3');
  assert.equal(cookieValue(h, 'junk'), '');
  assert.equal(cookieValue(head('/', [['cookie', 'q="']]), 'q'), '"');
  assert.equal(cookieValue(head('/', [['cookie', 'a =1']]), 'a'), '');
});

test('query parameters: the first value, undecoded; a bare name has the value ""', () => {
  assert.equal(queryParameter('/p?a=1&b=2&a=3', 'a'), '1');
  assert.equal(queryParameter('/p?a=1&b=2&a=3', 'b'), '2');
  assert.equal(queryParameter('/p?x=%41&flag&y=', 'x'), '%41');
  assert.equal(queryParameter('/p?x=%41&flag&y=', 'flag'), '');
  assert.equal(queryParameter('/p?x=%41&flag&y=', 'y'), '');
  assert.equal(queryParameter('/p?a=1', 'b'), null);
  assert.equal(queryParameter('/p', 'a'), null);
  assert.equal(queryParameter('/p?k=a=b', 'k'), 'a=b');
});

test('Set-Cookie text: quoted value, Max-Age unless 0, Path when set, HttpOnly', () => {
  assert.equal(setCookieValue('sticky', 'abc', '/app', 3600), 'sticky="abc"; Max-Age=3600; Path=/app; HttpOnly');
  assert.equal(setCookieValue('sticky', 'abc', '', 0), 'sticky="abc"; HttpOnly');
  assert.equal(setCookieValue('s', 'v', '/', 0), 's="v"; Path=/; HttpOnly');
});

test('a generated cookie value: xxHash64 of the remote and local addresses, in 16 hex digits', () => {
  const value = generatedCookieValue('10.0.0.1:5000', '10.0.0.2:80');
  assert.equal(value, xxHash64('10.0.0.1:500010.0.0.2:80').toString(16).padStart(16, '0'));
  assert.match(value, /^[0-9a-f]{16}$/);
});

test('the route context: hash computed once, on demand; the cookie it made becomes a set-cookie line', () => {
  const policies: HashPolicy[] = [{ kind: 'cookie', name: 'sticky', ttlSeconds: 300, path: '/', terminal: false }];
  const connection = { remoteAddress: '::1', remotePort: 40000, localAddress: '127.0.0.1', localPort: 8080 };
  const context = new RouteLoadBalancerContext(policies, null, head('/'), connection, { trustedClient: () => ({ ip: '::1', port: 40000, internal: true, edge: false }) });
  assert.deepEqual(context.setCookieHeaders, []);
  const expected = generatedCookieValue('[::1]:40000', '127.0.0.1:8080');
  assert.equal(context.hashKey, xxHash64(expected));
  assert.equal(context.hashKey, xxHash64(expected));
  assert.deepEqual(context.setCookieHeaders, ['set-cookie', `sticky="${expected}"; Max-Age=300; Path=/; HttpOnly`]);
  assert.equal(context.hostSelectionRetryCount, 0);
  assert.equal(context.metadataMatch, null);

  const criteria = [{ name: 'version', value: 'v1' }];
  const matchOnly = new RouteLoadBalancerContext(undefined, criteria, head('/'), connection, { trustedClient: () => ({ ip: '::1', port: 40000, internal: true, edge: false }) });
  assert.equal(matchOnly.hashKey, null);
  assert.equal(matchOnly.metadataMatch, criteria);
});

test('header values hash as the bytes received (the codec reads them as latin1)', () => {
  const r = request(head('/', [['x-user', 'caf\u00e9']]));
  assert.equal(computeHashKey([header('x-user')], r), xxHash64(Uint8Array.from([0x63, 0x61, 0x66, 0xe9])));
});
