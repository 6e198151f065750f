import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Route, RouteConfiguration, RouteMatch, TlsRequirement, VirtualHost } from '../../src/config/model';
import { RequestHead } from '../../src/http/message';
import { matchedLength } from '../../src/filters/http/route_match';
import { FieldError } from '../../src/config/errors';
import { type RequestFacts, RouteTable } from '../../src/filters/http/route_table';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore } from '../../src/stats/store';

const NO_CONDITIONS = { caseSensitive: true, headers: [], queryParameters: [], grpc: false };

function route(name: string, match: Partial<RouteMatch>): Route {
  return { name, match: { ...NO_CONDITIONS, ...match }, action: { kind: 'route', cluster: name, timeoutMs: 15000, priority: 'DEFAULT' } };
}

function vhost(name: string, domains: string[], routes: Route[] = [route(name, { prefix: '/' })], requireTls: TlsRequirement = 'NONE'): VirtualHost {
  return { name, domains, routes, requireTls };
}

/** A plaintext request from outside, unless told otherwise. */
const FACTS: RequestFacts = { forwardedProto: () => 'http', isInternal: () => false, peerCertificate: () => null };

function table(...virtualHosts: VirtualHost[]): RouteTable {
  const config: RouteConfiguration = { name: 'rc', virtualHosts };
  return new RouteTable(config, new LiveRuntime([]), () => 0, createHeapStatsStore().scope('vhost'));
}

function request(authority: string, path = '/', headers: string[] = [], method = 'GET'): RequestHead {
  const head = new RequestHead(method, path, false);
  head.authority = authority;
  head.headers.push(...headers);
  return head;
}

const routed = (t: RouteTable, authority: string, path = '/', headers: string[] = []): string | null => t.route(request(authority, path, headers), FACTS)?.name ?? null;

test('domain precedence: exact, then longest suffix wildcard, then longest prefix wildcard, then *', () => {
  const t = table(
    vhost('exact', ['api.example.com']),
    vhost('suffix_long', ['*-bar.example.com']),
    vhost('suffix', ['*.example.com']),
    vhost('prefix_long', ['api.example.*']),
    vhost('prefix', ['api.*']),
    vhost('default', ['*']),
  );
  assert.equal(routed(t, 'api.example.com'), 'exact');
  assert.equal(routed(t, 'foo-bar.example.com'), 'suffix_long');
  assert.equal(routed(t, 'www.example.com'), 'suffix');
  assert.equal(routed(t, 'api.example.org'), 'prefix_long');
  assert.equal(routed(t, 'api.other.net'), 'prefix');
  assert.equal(routed(t, 'elsewhere.net'), 'default');
});

test('a suffix wildcard beats a prefix wildcard of any length', () => {
  const t = table(vhost('prefix', ['www.example.*']), vhost('suffix', ['*.com']));
  assert.equal(routed(t, 'www.example.com'), 'suffix');
});

test('a wildcard must match at least one character', () => {
  const t = table(vhost('suffix', ['*.example.com']), vhost('prefix', ['foo.*']), vhost('default', ['*']));
  assert.equal(routed(t, '.example.com'), 'default');
  assert.equal(routed(t, 'foo.'), 'default');
  assert.equal(routed(t, 'a.example.com'), 'suffix');
});

test('hosts are case-insensitive', () => {
  const t = table(vhost('exact', ['Api.Example.com']));
  assert.equal(routed(t, 'API.EXAMPLE.COM'), 'exact');
});

test('the port counts when a domain names it, and is ignored when none matches with it', () => {
  const t = table(vhost('with_port', ['example.com:8080']), vhost('plain', ['example.com']), vhost('v6', ['[::1]']));
  assert.equal(routed(t, 'example.com:8080'), 'with_port');
  assert.equal(routed(t, 'example.com:9090'), 'plain');
  assert.equal(routed(t, 'example.com'), 'plain');
  assert.equal(routed(t, '[::1]:10000'), 'v6');
  assert.equal(routed(t, 'unknown:80'), null);
});

test('no matching virtual host and no default: no route', () => {
  assert.equal(routed(table(vhost('a', ['a.com'])), 'b.com'), null);
});

test('only a default virtual host: every authority uses it', () => {
  assert.equal(routed(table(vhost('default', ['*'])), 'anything:1234'), 'default');
});

test('routes: first match wins; prefix against the whole path, path exact before the query', () => {
  const t = table(
    vhost('vh', ['*'], [
      route('exact', { path: '/exact' }),
      route('api', { prefix: '/api/' }),
      route('insensitive', { prefix: '/CaSe', caseSensitive: false }),
      route('insensitive_path', { path: '/Upper', caseSensitive: false }),
      route('catch_all', { prefix: '/' }),
    ]),
  );
  assert.equal(routed(t, 'h', '/exact'), 'exact');
  assert.equal(routed(t, 'h', '/exact?x=1'), 'exact');
  assert.equal(routed(t, 'h', '/exact/more'), 'catch_all');
  assert.equal(routed(t, 'h', '/EXACT'), 'catch_all');
  assert.equal(routed(t, 'h', '/api/v1?q'), 'api');
  assert.equal(routed(t, 'h', '/api'), 'catch_all');
  assert.equal(routed(t, 'h', '/case/anything'), 'insensitive');
  assert.equal(routed(t, 'h', '/upper'), 'insensitive_path');
  assert.equal(routed(t, 'h', '/upperx'), 'catch_all');
});

test('a path that no route matches has no route', () => {
  const t = table(vhost('vh', ['*'], [route('api', { prefix: '/api' })]));
  assert.equal(routed(t, 'h', '/other'), null);
});

test('a domain claimed twice is a configuration error at its second entry, in Envoy words', () => {
  const at = (fieldPath: string, reason: string) => (e: unknown) => e instanceof FieldError && e.fieldPath === fieldPath && e.reason === reason;
  assert.throws(
    () => table(vhost('a', ['x.com']), vhost('b', ['y.com', 'X.com'])),
    at('virtual_hosts[1].domains[1]', 'Only unique values for domains are permitted. Duplicate entry of domain x.com in route rc'),
  );
  assert.throws(() => table(vhost('a', ['*.x.com', '*.x.com'])), at('virtual_hosts[0].domains[1]', 'Only unique values for domains are permitted. Duplicate entry of domain *.x.com in route rc'));
  assert.throws(() => table(vhost('a', ['*']), vhost('b', ['*'])), at('virtual_hosts[1].domains[0]', 'Only a single wildcard domain is permitted in route rc'));
});

test('safe_regex: the whole path before its query string and fragment, case as the regex says', () => {
  const t = table(
    vhost('vh', ['*'], [
      route('regex', { safeRegex: '/b[io]t/[0-9]+' }),
      route('catch_all', { prefix: '/' }),
    ]),
  );
  assert.equal(routed(t, 'h', '/bit/123'), 'regex');
  assert.equal(routed(t, 'h', '/bot/9?x=/bit'), 'regex');
  assert.equal(routed(t, 'h', '/bot/9#frag'), 'regex');
  assert.equal(routed(t, 'h', '/bot/9/more'), 'catch_all');
  assert.equal(routed(t, 'h', '/BIT/1'), 'catch_all');
  assert.equal(routed(t, 'h', '/x/bit/1'), 'catch_all');
});

test('prefix_rewrite replaces what the match covered: the prefix, the path, or a regex route\'s whole path', () => {
  const base = { ...NO_CONDITIONS };
  assert.equal(matchedLength({ ...base, prefix: '/api/' }, '/api/v1?q'), 5);
  assert.equal(matchedLength({ ...base, path: '/exact' }, '/exact?q'), 6);
  assert.equal(matchedLength({ ...base, safeRegex: '/b.t' }, '/bot?q=1'), 4);
  assert.equal(matchedLength({ ...base, safeRegex: '/b.t' }, '/bot'), 4);
});

test('headers: every matcher must hold, Envoy\'s examples among them', () => {
  const t = table(
    vhost('vh', ['*'], [
      route('both', {
        prefix: '/',
        headers: [
          { name: 'x-canary', invert: false, specifier: { kind: 'exact', value: 'yes' } },
          { name: 'x-version', invert: false, specifier: { kind: 'range', start: '2', end: '5' } },
        ],
      }),
      route('regex', { prefix: '/', headers: [{ name: 'user-agent', invert: false, specifier: { kind: 'safe_regex', regex: '.*Mobile.*' } }] }),
      route('absent', { prefix: '/', headers: [{ name: 'x-debug', invert: true, specifier: { kind: 'present' } }] }),
      route('method', { prefix: '/', headers: [{ name: ':method', invert: false, specifier: { kind: 'exact', value: 'POST' } }] }),
      route('catch_all', { prefix: '/' }),
    ]),
  );
  assert.equal(routed(t, 'h', '/', ['x-canary', 'yes', 'x-version', '3']), 'both');
  assert.equal(routed(t, 'h', '/', ['x-canary', 'yes', 'x-version', '5', 'x-debug', '1']), 'catch_all');
  assert.equal(routed(t, 'h', '/', ['user-agent', 'Foo Mobile Safari', 'x-debug', '1']), 'regex');
  assert.equal(routed(t, 'h', '/', ['x-canary', 'yes']), 'absent');
  assert.equal(t.route(request('h', '/', ['x-debug', '1'], 'POST'), FACTS)?.name, 'method');
});

test("header and query parameter values are bytes: the configuration's text compared as UTF-8, a regex reading UTF-8, as Envoy", () => {
  const t = table(
    vhost('vh', ['*'], [
      route('exact', { prefix: '/', headers: [{ name: 'x-city', invert: false, specifier: { kind: 'exact', value: 'zürich' } }] }),
      route('prefix', { prefix: '/', headers: [{ name: 'x-city', invert: false, specifier: { kind: 'prefix', value: 'gen→' } }] }),
      // One character, as RE2 reads UTF-8: the two bytes of é are one `.`.
      route('regex', { prefix: '/', headers: [{ name: 'x-name', invert: false, specifier: { kind: 'safe_regex', regex: 'caf.' } }] }),
      route('query', { prefix: '/', queryParameters: [{ name: 'q', value: { kind: 'exact', value: 'né', ignoreCase: false } }] }),
      route('query_regex', { prefix: '/', queryParameters: [{ name: 'r', value: { kind: 'safe_regex', value: 'n.', ignoreCase: false } }] }),
      route('catch_all', { prefix: '/' }),
    ]),
  );
  // What a codec reads: each byte one character.
  const bytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
  assert.equal(routed(t, 'h', '/', ['x-city', bytes('zürich')]), 'exact');
  assert.equal(routed(t, 'h', '/', ['x-city', bytes('gen→va')]), 'prefix');
  assert.equal(routed(t, 'h', '/', ['x-name', bytes('café')]), 'regex');
  assert.equal(routed(t, 'h', '/', ['x-name', bytes('cafés')]), 'catch_all');
  assert.equal(routed(t, 'h', `/x?q=${bytes('né')}`), 'query');
  assert.equal(routed(t, 'h', `/x?r=${bytes('né')}`), 'query_regex');
});

test('query_parameters: present, exact, regex and case-insensitive; first value wins; not decoded', () => {
  const t = table(
    vhost('vh', ['*'], [
      route('debug', { prefix: '/', queryParameters: [{ name: 'debug', value: null }] }),
      route('exact', { prefix: '/', queryParameters: [{ name: 'v', value: { kind: 'exact', value: 'a b', ignoreCase: false } }] }),
      route('regex', { prefix: '/', queryParameters: [{ name: 'id', value: { kind: 'safe_regex', value: '[0-9]+', ignoreCase: false } }] }),
      route('folded', { prefix: '/', queryParameters: [{ name: 'mode', value: { kind: 'prefix', value: 'fast', ignoreCase: true } }] }),
      route('catch_all', { prefix: '/' }),
    ]),
  );
  assert.equal(routed(t, 'h', '/x?debug'), 'debug');
  assert.equal(routed(t, 'h', '/x?a=1&debug=0'), 'debug');
  assert.equal(routed(t, 'h', '/x?debugger=1'), 'catch_all');
  assert.equal(routed(t, 'h', '/x?v=a b'), 'exact');
  assert.equal(routed(t, 'h', '/x?v=a%20b'), 'catch_all');
  assert.equal(routed(t, 'h', '/x?id=42'), 'regex');
  assert.equal(routed(t, 'h', '/x?id=4x&id=42'), 'catch_all');
  assert.equal(routed(t, 'h', '/x?mode=FASTEST'), 'folded');
  assert.equal(routed(t, 'h', '/x'), 'catch_all');
});

test('grpc: content-type application/grpc, alone or with a +codec; grpc-web is not gRPC', () => {
  const t = table(vhost('vh', ['*'], [route('grpc', { prefix: '/', grpc: true }), route('catch_all', { prefix: '/' })]));
  assert.equal(routed(t, 'h', '/pkg.Svc/M', ['content-type', 'application/grpc']), 'grpc');
  assert.equal(routed(t, 'h', '/pkg.Svc/M', ['content-type', 'application/grpc+proto']), 'grpc');
  assert.equal(routed(t, 'h', '/pkg.Svc/M', ['content-type', 'application/grpc-web']), 'catch_all');
  assert.equal(routed(t, 'h', '/pkg.Svc/M', ['content-type', 'application/json']), 'catch_all');
  assert.equal(routed(t, 'h', '/pkg.Svc/M'), 'catch_all');
});

test('connect_matcher: CONNECT requests and only they; no path specifier matches a CONNECT (it has no path)', () => {
  const t = table(vhost('vh', ['*'], [route('prefix', { prefix: '/' }), route('connect', { connect: true }), route('empty_prefix', { prefix: '' })]));
  const connect = new RequestHead('CONNECT', '', false);
  connect.authority = 'tunnel.example:443';
  assert.equal(t.route(connect, FACTS)?.name, 'connect');
  assert.equal(routed(t, 'h', '/'), 'prefix');
  // A GET never takes the connect route, whatever its path.
  const only = table(vhost('vh', ['*'], [route('connect', { connect: true })]));
  assert.equal(only.route(request('h', '/'), FACTS), null);
  // An empty prefix matches an empty path, as in Envoy.
  const withoutConnectRoute = table(vhost('vh', ['*'], [route('prefix', { prefix: '/' }), route('empty_prefix', { prefix: '' })]));
  assert.equal(withoutConnectRoute.route(connect, FACTS)?.name, 'empty_prefix');
});

test('tls_context: presented and validated each compare with the client certificate; plaintext has neither', () => {
  const routes = [
    route('validated', { prefix: '/', tlsContext: { validated: true } }),
    route('presented', { prefix: '/', tlsContext: { presented: true } }),
    route('anonymous', { prefix: '/', tlsContext: { presented: false } }),
    route('catch_all', { prefix: '/' }),
  ];
  const t = table(vhost('vh', ['*'], routes));
  const over = (peerCertificatePresented: boolean, peerCertificateValidated: boolean): RequestFacts => ({ ...FACTS, peerCertificate: () => ({ peerCertificatePresented, peerCertificateValidated }) });
  const name = (facts: RequestFacts): string | undefined => t.route(request('h'), facts)?.name;
  assert.equal(name(over(true, true)), 'validated');
  assert.equal(name(over(true, false)), 'presented');
  assert.equal(name(over(false, false)), 'anonymous');
  assert.equal(name(FACTS), 'anonymous');
  // Both set: both must hold.
  const both = table(vhost('vh', ['*'], [route('both', { prefix: '/', tlsContext: { presented: true, validated: false } }), route('catch_all', { prefix: '/' })]));
  assert.equal(both.route(request('h'), over(true, false))?.name, 'both');
  assert.equal(both.route(request('h'), over(true, true))?.name, 'catch_all');
});

test('require_tls: ALL redirects every plaintext request, EXTERNAL_ONLY those from outside', () => {
  const t = table(vhost('all', ['all.com'], undefined, 'ALL'), vhost('external', ['ext.com'], undefined, 'EXTERNAL_ONLY'), vhost('none', ['*']));
  const facts = (forwardedProto: string, internal: boolean): RequestFacts => ({ forwardedProto: () => forwardedProto, isInternal: () => internal, peerCertificate: () => null });
  const action = (authority: string, f: RequestFacts) => t.route(request(authority), f)?.action;
  const redirect = { kind: 'redirect', scheme: 'https', host: null, port: null, path: null, prefixRewrite: null, status: 301, stripQuery: false };
  assert.deepEqual(action('all.com', facts('http', true)), redirect);
  assert.equal(action('all.com', facts('https', false))?.kind, 'route');
  assert.deepEqual(action('ext.com', facts('http', false)), redirect);
  assert.equal(action('ext.com', facts('http', true))?.kind, 'route');
  assert.equal(action('other.com', facts('http', false))?.kind, 'route');
});

// ---- runtime_fraction ---------------------------------------------------------------------

function fractionTable(runtime: LiveRuntime, draws: number[], fraction: NonNullable<Route['match']['runtimeFraction']>): RouteTable {
  const routes: Route[] = [
    route('sampled', { prefix: '/', runtimeFraction: fraction }),
    route('rest', { prefix: '/' }),
  ];
  return new RouteTable({ name: 'rc', virtualHosts: [vhost('vh', ['*'], routes)] }, runtime, () => draws.shift()!, createHeapStatsStore().scope('vhost'));
}

test('runtime_fraction: the default applies while the key is unset; a route left out falls to the next', () => {
  const runtime = new LiveRuntime([]);
  const t = fractionTable(runtime, [29, 30, 129, 130], { defaultValue: { numerator: 30, denominator: 'HUNDRED' }, runtimeKey: 'routing.sampled' });
  // random % 100 < 30
  assert.deepEqual([routed(t, 'h'), routed(t, 'h'), routed(t, 'h'), routed(t, 'h')], ['sampled', 'rest', 'sampled', 'rest']);
});

test('runtime_fraction: an integer runtime value is a percentage; above 100 always matches', () => {
  const runtime = new LiveRuntime([['k', '5']]);
  const t = fractionTable(runtime, [4, 5, 99, 99], { defaultValue: { numerator: 100, denominator: 'HUNDRED' }, runtimeKey: 'k' });
  assert.equal(routed(t, 'h'), 'sampled');
  assert.equal(routed(t, 'h'), 'rest');
  runtime.replace([['k', '101']]);
  assert.equal(routed(t, 'h'), 'sampled');
  runtime.replace([['k', '0']]);
  assert.equal(routed(t, 'h'), 'rest');
});

test('runtime_fraction: a FractionalPercent runtime value carries its own denominator', () => {
  const runtime = new LiveRuntime([['k', 'numerator: 2\ndenominator: TEN_THOUSAND']]);
  const t = fractionTable(runtime, [10_001, 10_002, 1_000_001], { defaultValue: { numerator: 0, denominator: 'MILLION' }, runtimeKey: 'k' });
  assert.equal(routed(t, 'h'), 'sampled'); // 10001 % 10000 = 1 < 2
  assert.equal(routed(t, 'h'), 'rest'); // 2
  runtime.replace([['k', 'not a number']]);
  assert.equal(routed(t, 'h'), 'rest'); // the default: 0 of a million
});

test('runtime_fraction: the random value is taken modulo the default denominator', () => {
  const draws = [1_000_499];
  const t = fractionTable(new LiveRuntime([]), draws, { defaultValue: { numerator: 500, denominator: 'MILLION' }, runtimeKey: '' });
  assert.equal(routed(t, 'h'), 'sampled');
});

// ---- direct response bodies from files ----------------------------------------------------

test('a direct response body file is read when the table is built; one it cannot use is refused at its field', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'route-table-'));
  try {
    const file = (name: string, content: string | Buffer): string => {
      fs.writeFileSync(path.join(dir, name), content);
      return path.join(dir, name);
    };
    const direct = (bodyFile: string): Route => ({ name: 'd', match: { ...NO_CONDITIONS, prefix: '/' }, action: { kind: 'direct_response', status: 503, body: '', bodyFile } });
    const routedBody = (t: RouteTable): string | null => {
      const action = t.route(request('h'), FACTS)?.action;
      return action?.kind === 'direct_response' ? action.body : null;
    };
    assert.equal(routedBody(table(vhost('vh', ['*'], [direct(file('ok.html', '<p>maintenance</p>\n'))]))), '<p>maintenance</p>\n');
    assert.equal(routedBody(table(vhost('vh', ['*'], [direct(file('max', 'x'.repeat(4096)))]))), 'x'.repeat(4096));
    const refused = (bodyFile: string, reason: string) =>
      assert.throws(
        () => table(vhost('a', ['a.com']), vhost('vh', ['*'], [route('r', { prefix: '/x' }), direct(bodyFile)])),
        (e: unknown) => e instanceof FieldError && e.fieldPath === 'virtual_hosts[1].routes[1].direct_response.body.filename' && e.reason === reason,
      );
    refused(file('big', 'x'.repeat(4097)), 'response body size is 4097 bytes; maximum is 4096');
    refused(path.join(dir, 'missing'), `cannot read '${path.join(dir, 'missing')}': ENOENT`);
    refused(file('bin', Buffer.from([0xff, 0xfe])), `'${path.join(dir, 'bin')}' is not UTF-8 text (this build sends direct response bodies as text)`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
