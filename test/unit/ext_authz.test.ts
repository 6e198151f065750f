// ext_authz's pure parts: which headers pass each way (Envoy 1.16's matchers), the CheckRequest
// made of a request (peers and principals, HTTP attributes, body and partial-body header), the
// HTTP service's request, and what each service's answer means.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StringMatch } from '../../src/config/model';
import { checkRequest, type CheckInputs } from '../../src/filters/http/ext_authz_check_request';
import { clientHeaderMatcher, requestHeaderMatcher, upstreamHeaderMatcher } from '../../src/filters/http/ext_authz_header_matchers';
import { httpCheckRequest } from '../../src/filters/http/ext_authz_http_request';
import { grpcAuthzResponse, httpAuthzResponse } from '../../src/filters/http/ext_authz_response';
import type { DownstreamFacts } from '../../src/filters/http/http_filter';
import { RequestHead, ResponseHead } from '../../src/http/message';
import type { DownstreamConnectionInfo, SslConnectionInfo } from '../../src/stream_info/stream_info';

const exact = (value: string): StringMatch => ({ kind: 'exact', value, ignoreCase: false });
const prefix = (value: string): StringMatch => ({ kind: 'prefix', value, ignoreCase: false });

test('the request matcher always passes :authority, :method, :path and authorization, and what allowed_headers matches', () => {
  const matches = requestHeaderMatcher([prefix('x-user-')]);
  assert.deepEqual(
    [':authority', ':method', ':path', 'authorization', 'x-user-id', 'cookie', ':scheme'].map(matches),
    [true, true, true, true, true, false, false],
  );
  // Envoy 1.16 matches as configured: an upper-case pattern matches no (lower-case) name.
  assert.equal(requestHeaderMatcher([exact('X-Foo')])('x-foo'), false);
});

test('the client matcher: everything but :authority when unset, else what it allows and the status, length, www-authenticate and location', () => {
  const all = clientHeaderMatcher([]);
  assert.deepEqual(['set-cookie', 'host', ':authority'].map(all), [true, true, false]);
  const some = clientHeaderMatcher([exact('x-reason')]);
  assert.deepEqual(['x-reason', 'www-authenticate', 'location', 'content-length', ':status', 'set-cookie'].map(some), [true, true, true, true, true, false]);
  assert.equal(upstreamHeaderMatcher([])('x-anything'), false);
});

function ssl(fields: Partial<SslConnectionInfo>): SslConnectionInfo {
  return {
    peerCertificatePresented: true,
    peerCertificateValidated: true,
    peerSubject: 'CN=client',
    peerIssuer: null,
    peerUriSans: [],
    peerDnsSans: [],
    peerSerial: null,
    peerFingerprint256: null,
    peerFingerprint1: null,
    peerCertificatePem: '-----BEGIN%20CERTIFICATE-----',
    peerValidFrom: null,
    peerExpiration: null,
    localSubject: 'CN=proxy',
    localUriSans: [],
    localDnsSans: ['proxy.example'],
    tlsVersion: null,
    cipherSuite: null,
    sessionId: null,
    ...fields,
  };
}

function downstream(protocol: 'http1' | 'http2', tls: SslConnectionInfo | null = null): DownstreamFacts {
  const connection: DownstreamConnectionInfo = { id: 1, localAddress: '[::1]:10000', directRemoteAddress: '10.0.0.7:51000', requestedServerName: null, ssl: tls };
  return { connectionInfo: () => connection, startTime: () => Date.UTC(2020, 0, 2, 3, 4, 5, 678), protocol, streamId: 42 };
}

function inputs(head: RequestHead, fields: Partial<CheckInputs> = {}): CheckInputs {
  return { head, downstream: downstream('http1'), body: null, maxRequestBytes: 0, size: 0, contextExtensions: {}, metadataContext: {}, includePeerCertificate: false, ...fields };
}

function get(path = '/a?b=1'): RequestHead {
  const head = new RequestHead('GET', path, false);
  head.authority = 'example.com';
  head.headers.push('cookie', 'a=1', 'cookie', 'b=2', 'x-proxy-auth-partial-body', 'forged', 'x-proxy-downstream-service-cluster', 'front');
  return head;
}

test('a CheckRequest: peers, time, the HTTP attributes and headers as Envoy 1.16 fills them', () => {
  const { request, body } = checkRequest(inputs(get(), { contextExtensions: { k: 'v' }, metadataContext: { 'proxy.lb': { a: 1 } } }));
  const { source, destination, request: attributes, context_extensions, metadata_context } = request.attributes;
  assert.deepEqual(source, { address: { socket_address: { address: '10.0.0.7', port_value: 51000 } }, service: 'front' });
  assert.deepEqual(destination, { address: { socket_address: { address: '::1', port_value: 10000 } } });
  assert.equal(attributes.time, '2020-01-02T03:04:05.678Z');
  assert.deepEqual(attributes.http, {
    id: '42',
    method: 'GET',
    // Pseudo-headers first; a repeated header joined; the client's own partial-body header gone.
    headers: { ':authority': 'example.com', ':path': '/a?b=1', ':method': 'GET', cookie: 'a=1,b=2', 'x-proxy-downstream-service-cluster': 'front' },
    path: '/a?b=1',
    host: 'example.com',
    scheme: '',
    size: 0,
    protocol: 'HTTP/1.1',
  });
  assert.deepEqual(context_extensions, { k: 'v' });
  assert.deepEqual(metadata_context, { filter_metadata: { 'proxy.lb': { a: 1 } } });
  assert.equal(body, null);
});

test("HTTP/2's :scheme and protocol; HTTP/1.0's protocol", () => {
  const h2 = checkRequest({ ...inputs(get()), downstream: downstream('http2') }).request.attributes.request.http;
  assert.deepEqual([h2.scheme, h2.headers[':scheme'], h2.protocol], ['http', 'http', 'HTTP/2']);
  const old = new RequestHead('GET', '/', true);
  assert.equal(checkRequest(inputs(old)).request.attributes.request.http.protocol, 'HTTP/1.0');
});

test('principals: the first URI SAN, else the first DNS SAN, else the subject; the certificate only when asked for', () => {
  const peer = (tls: SslConnectionInfo, includePeerCertificate: boolean) =>
    checkRequest({ ...inputs(get(), { includePeerCertificate }), downstream: downstream('http1', tls) }).request.attributes;
  const uri = peer(ssl({ peerUriSans: ['spiffe://a', 'spiffe://b'], peerDnsSans: ['a.example'] }), false);
  assert.deepEqual([uri.source.principal, uri.source.certificate, uri.destination.principal], ['spiffe://a', undefined, 'proxy.example']);
  const dns = peer(ssl({ peerDnsSans: ['a.example'] }), true);
  assert.deepEqual([dns.source.principal, dns.source.certificate], ['a.example', '-----BEGIN%20CERTIFICATE-----']);
  assert.equal(peer(ssl({}), false).source.principal, 'CN=client');
  assert.equal(peer(ssl({ localDnsSans: [] }), false).destination.principal, 'CN=proxy');
});

test('the body: cut to max_request_bytes, and the partial-body header says whether it was', () => {
  const post = new RequestHead('POST', '/up', false);
  const whole = checkRequest(inputs(post, { body: Buffer.from('hello'), maxRequestBytes: 10, size: 5 }));
  assert.deepEqual([whole.request.attributes.request.http.body, whole.request.attributes.request.http.headers['x-proxy-auth-partial-body'], whole.request.attributes.request.http.size], ['hello', 'false', 5]);
  const cut = checkRequest(inputs(post, { body: Buffer.from('hello'), maxRequestBytes: 3 }));
  assert.deepEqual([cut.request.attributes.request.http.body, cut.request.attributes.request.http.headers['x-proxy-auth-partial-body'], cut.body?.toString()], ['hel', 'true', 'hel']);
});

test("the HTTP service's request: method, prefixed path, host, matched headers, headers_to_add in place, the body's length", () => {
  const head = get('/api?x=1');
  head.headers.push('authorization', 'Bearer t', 'content-length', '99', 'x-from', 'client');
  const check = checkRequest(inputs(head, { body: Buffer.from('abc'), maxRequestBytes: 10 }));
  const { head: sent, body } = httpCheckRequest(check, { pathPrefix: '/check', requestHeaders: requestHeaderMatcher([exact('cookie'), exact('x-from')]), headersToAdd: ['x-from', 'proxy'] });
  assert.deepEqual([sent.method, sent.path, sent.authority, sent.contentLength, body.toString()], ['GET', '/check/api?x=1', 'example.com', 3, 'abc']);
  assert.deepEqual(sent.headers, ['cookie', 'a=1,b=2', 'authorization', 'Bearer t', 'x-from', 'proxy']);
});

test("the HTTP service's answer: 200 allows with the allowed headers, a 5xx is an error, other statuses deny", () => {
  const response = (status: number) => {
    const head = new ResponseHead(status, false);
    head.headers.push('x-user', 'alice', 'x-extra', 'e', 'set-cookie', 'a', 'set-cookie', 'b', 'date', 'today');
    return head;
  };
  const matchers = { upstream: upstreamHeaderMatcher([exact('x-user')]), upstreamToAppend: upstreamHeaderMatcher([exact('x-extra')]), client: clientHeaderMatcher([exact('set-cookie')]) };
  assert.deepEqual(httpAuthzResponse(response(200), Buffer.alloc(0), matchers), { kind: 'ok', headersToSet: ['x-user', 'alice'], headersToAdd: ['x-extra', 'e'], headersToAppend: [], dynamicMetadata: null });
  assert.deepEqual(httpAuthzResponse(response(503), Buffer.from('down'), matchers), { kind: 'error' });
  assert.deepEqual(httpAuthzResponse(response(302), Buffer.from('go'), matchers), { kind: 'denied', status: 302, headers: ['set-cookie', 'a', 'set-cookie', 'b'], body: Buffer.from('go') });
});

test("the gRPC service's answer: OK allows (append: true appends, else sets), anything else denies, 403 without a denied_response", () => {
  const codes = { Unauthorized: 401, Forbidden: 403 };
  const ok = grpcAuthzResponse(
    {
      status: { code: 0 },
      okResponse: { headers: [{ header: { key: 'X-User', value: 'alice' } }, { header: { key: 'x-a', value: '1' }, append: true }, { header: { key: 'x-s', value: '2' }, append: false }] },
      dynamicMetadata: { outer: true },
    },
    codes,
  );
  assert.deepEqual(ok, { kind: 'ok', headersToSet: ['x-user', 'alice', 'x-s', '2'], headersToAdd: [], headersToAppend: ['x-a', '1'], dynamicMetadata: { outer: true } });
  // ok_response's own metadata wins, as Envoy 1.16 reads the deprecated field first.
  const inner = grpcAuthzResponse({ okResponse: { dynamicMetadata: { inner: 1 } }, dynamicMetadata: { outer: true } }, codes);
  assert.ok(inner.kind === 'ok');
  assert.deepEqual(inner.dynamicMetadata, { inner: 1 });
  assert.deepEqual(grpcAuthzResponse({ status: { code: 7 } }, codes), { kind: 'denied', status: 403, headers: [], body: '' });
  assert.deepEqual(
    grpcAuthzResponse({ status: { code: 16 }, deniedResponse: { status: { code: 'Unauthorized' }, headers: [{ header: { key: 'x-why', value: 'no' }, append: true }, { header: { key: 'x-r', value: 'r' } }], body: 'nope' } }, codes),
    { kind: 'denied', status: 401, headers: ['x-r', 'r'], body: 'nope' },
  );
  // A header value is bytes on the wire: the service's Unicode goes as UTF-8.
  const unicode = grpcAuthzResponse({ okResponse: { headers: [{ header: { key: 'x-user', value: 'zoë' } }] } }, codes);
  assert.ok(unicode.kind === 'ok');
  assert.equal(Buffer.from(unicode.headersToSet[1]!, 'latin1').toString('utf8'), 'zoë');
});
