import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FieldError } from '../../src/config/errors';
import { RequestHead } from '../../src/http/message';
import { type HeaderFormatContext, parseHeaderFormat } from '../../src/filters/http/header_format';
import { HeaderMutator } from '../../src/filters/http/header_mutator';
import { forwardedForOf, trustedClient } from '../../src/http/trusted_client';
import { shortestG } from '../../src/filters/http/upstream_metadata';
import { SystemClock } from '../../src/common/clock';
import { ResponseFlag } from '../../src/stream_info/response_flags';
import { type SslConnectionInfo, StreamInfo } from '../../src/stream_info/stream_info';

function context(headers: string[] = [], useRemoteAddress = true): HeaderFormatContext {
  const head = new RequestHead('GET', '/', false);
  head.headers.push(...headers);
  return {
    head,
    connection: { remoteAddress: '10.0.0.7', remotePort: 40000, localAddress: '127.0.0.1', localPort: 8080 },
    client: trustedClient({ useRemoteAddress, xffNumTrustedHops: 0 }, '10.0.0.7', 40000, forwardedForOf(head)),
    protocol: 'HTTP/1.1',
    hostname: 'proxy-host',
    ssl: null,
    // 2016-04-15T20:17:00.310Z
    startTime: 1460751420310,
    upstreamHost: null,
    info: null,
  };
}

const SSL: SslConnectionInfo = {
    peerCertificatePresented: true,
    peerCertificateValidated: true,
  peerSubject: 'CN=client',
  peerIssuer: 'CN=ca',
  peerUriSans: ['spiffe://a', 'spiffe://b'],
  peerDnsSans: [],
  peerSerial: '0a1b',
  peerFingerprint256: 'ab'.repeat(32),
  peerFingerprint1: 'cd'.repeat(20),
  peerCertificatePem: '-----BEGIN%20CERTIFICATE-----',
  peerValidFrom: new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 6)),
  peerExpiration: null,
  localSubject: 'CN=proxy',
  localUriSans: [],
  localDnsSans: [],
  tlsVersion: 'TLSv1.3',
  cipherSuite: 'TLS_AES_128_GCM_SHA256',
  sessionId: 'beef',
};

const format = (text: string, c = context()): string => parseHeaderFormat(text)(c);

test('literal text, %% for %, and the variables a request tells', () => {
  assert.equal(format(''), '');
  assert.equal(format('plain'), 'plain');
  assert.equal(format('100%% sure'), '100% sure');
  assert.equal(format('%DOWNSTREAM_REMOTE_ADDRESS%'), '10.0.0.7:40000');
  assert.equal(format('ip=%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%;'), 'ip=10.0.0.7;');
  assert.equal(format('%DOWNSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT% %DOWNSTREAM_LOCAL_PORT%'), '127.0.0.1:8080 127.0.0.1 8080');
  assert.equal(format('%PROTOCOL%/%HOSTNAME%'), 'HTTP/1.1/proxy-host');
  // Without use_remote_address, Envoy's remote address is the trusted x-forwarded-for one, port 0.
  assert.equal(format('%DOWNSTREAM_REMOTE_ADDRESS%', context(['x-forwarded-for', '192.0.2.1'], false)), '192.0.2.1:0');
});

test("a value is bytes: the configuration's and other Unicode text as UTF-8, a request's header as it came", () => {
  const utf8 = (value: string) => Buffer.from(value, 'latin1').toString('utf8');
  const c = context(['x-name', 'caf\xc3\xa9']);
  c.upstreamHost = { addressString: '10.0.0.9:8080', metadata: { 'proxy.lb': { zone: 'zürich' } } };
  assert.equal(utf8(format('café → %REQ(x-name)% %UPSTREAM_METADATA(["proxy.lb", "zone"])% %START_TIME(%Y→%m)%', c)), 'café → café zürich 2016→04');
  assert.equal(format('%REQ(x-name)%', c), 'caf\xc3\xa9');
  assert.equal(parseHeaderFormat('100%% café').literal, '100% caf\xc3\xa9');
  const tls = { ...context(), ssl: { ...SSL, peerSubject: 'CN=Zoë' } };
  assert.equal(utf8(format('%DOWNSTREAM_PEER_SUBJECT%', tls)), 'CN=Zoë');
});

test('what Envoy refuses, in its words; what this build cannot fill in, by name', () => {
  const refused = (text: string, reason: string) => assert.throws(() => parseHeaderFormat(text), (e: unknown) => e instanceof FieldError && e.reason === reason, text);
  refused('%', 'Invalid header configuration. Un-escaped % at position 0');
  refused('abc%', 'Invalid header configuration. Un-escaped % at position 3');
  refused('%VAR', "Invalid header configuration. Un-terminated variable expression 'VAR'");
  refused('%%%VAR', "Invalid header configuration. Un-terminated variable expression 'VAR'");
  refused('%INVALID%', "field 'INVALID' not supported as custom header");
  refused('%PROTOCOL(x)%', "field 'PROTOCOL(x)' not supported as custom header");
  refused('%VAR(["a" "b"])%', `Invalid header configuration. Expecting ',', ']', or whitespace after 'VAR(["a" ', but found '"'`);
  refused('%VAR([x])%', `Invalid header configuration. Expecting '"' or whitespace after 'VAR([', but found 'x'`);
  refused('%VAR(["a"] x)%', `Invalid header configuration. Expecting ')' or whitespace after 'VAR(["a"] ', but found 'x'`);
  refused('%VAR(["a"]) x%', `Invalid header configuration. Expecting '%' or whitespace after 'VAR(["a"]) ', but found 'x'`);
  refused('%PER_REQUEST_STATE(a.b)%', "field 'PER_REQUEST_STATE' is not supported as a custom header by this build yet");
  refused('%UPSTREAM_METADATA(["ns"])%', 'Invalid header configuration. Expected format UPSTREAM_METADATA(["namespace", "k", ...]), actual format UPSTREAM_METADATA(["ns"])');
  refused('%UPSTREAM_METADATA%', 'Invalid header configuration. Expected format UPSTREAM_METADATA(["namespace", "k", ...]), actual format UPSTREAM_METADATA');
  refused('%REQ%', 'Invalid header configuration. Expected format REQ(<header-name>), actual format REQ');
  refused('%START_TIMES%', 'Not supported field in StreamInfo: START_TIMES');
});

test('the stream\'s start time, a request header, the upstream host and its metadata', () => {
  assert.equal(format('%START_TIME%'), '2016-04-15T20:17:00.310Z');
  assert.equal(format('%START_TIME(%s.%3f)%'), '1460751420.310');
  assert.equal(format('%START_TIME(%Y/%m/%d)% at %START_TIME(%H:%M)%'), '2016/04/15 at 20:17');
  assert.equal(format('%REQ(X-Tag)%|%REQ(:path)%|%REQ(absent)%', context(['x-tag', 'first', 'x-tag', 'second'])), 'first|/|');
  const c = context();
  assert.equal(format('%UPSTREAM_REMOTE_ADDRESS%', c), '');
  assert.equal(format('%UPSTREAM_METADATA(["proxy.lb", "version"])%', c), '');
  c.upstreamHost = { addressString: '10.0.0.9:8080', metadata: { 'proxy.lb': { version: 'v2', weight: 1.5, big: 1234567, tiny: 0.00001234, canary: true, nested: { deep: 'yes' }, list: [1] } } };
  assert.equal(format('%UPSTREAM_REMOTE_ADDRESS%', c), '10.0.0.9:8080');
  const metadata = (path: string): string => format(`%UPSTREAM_METADATA(${path})%`, c);
  assert.equal(metadata('["proxy.lb", "version"]'), 'v2');
  assert.equal(metadata('["proxy.lb", "weight"]'), '1.5');
  assert.equal(metadata('["proxy.lb", "big"]'), '1.23457e+06');
  assert.equal(metadata('["proxy.lb", "tiny"]'), '1.234e-05');
  assert.equal(metadata('["proxy.lb", "canary"]'), 'true');
  assert.equal(metadata('["proxy.lb", "nested", "deep"]'), 'yes');
  // A struct, a list, a missing key or namespace: nothing.
  for (const path of ['["proxy.lb", "nested"]', '["proxy.lb", "list"]', '["proxy.lb", "absent"]', '["other", "version"]', '["proxy.lb", "version", "more"]']) assert.equal(metadata(path), '', path);
});

test('the TLS session\'s facts, nothing on a plaintext connection', () => {
  const tls = { ...context(), ssl: SSL };
  assert.equal(format('%DOWNSTREAM_PEER_URI_SAN%;%DOWNSTREAM_LOCAL_URI_SAN%;%DOWNSTREAM_PEER_SUBJECT%;%DOWNSTREAM_PEER_ISSUER%', tls), 'spiffe://a,spiffe://b;;CN=client;CN=ca');
  assert.equal(format('%DOWNSTREAM_TLS_VERSION% %DOWNSTREAM_TLS_CIPHER% %DOWNSTREAM_TLS_SESSION_ID% %DOWNSTREAM_PEER_SERIAL%', tls), 'TLSv1.3 TLS_AES_128_GCM_SHA256 beef 0a1b');
  assert.equal(format('%DOWNSTREAM_PEER_FINGERPRINT_256%', tls), 'ab'.repeat(32));
  assert.equal(format('%DOWNSTREAM_PEER_CERT_V_START%|%DOWNSTREAM_PEER_CERT_V_END%', tls), '2020-01-02T03:04:05.006Z|');
  assert.equal(format('%DOWNSTREAM_PEER_SUBJECT%%DOWNSTREAM_TLS_VERSION%%DOWNSTREAM_PEER_CERT_V_START%'), '');
});

test('the response flags and details from the stream record; only a value that prints them needs one', () => {
  const info = new StreamInfo({ id: 1, localAddress: '127.0.0.1:80', directRemoteAddress: '127.0.0.1:5000', requestedServerName: null, ssl: null }, new SystemClock());
  const c = { ...context(), info };
  assert.equal(format('%RESPONSE_FLAGS%|%RESPONSE_CODE_DETAILS%', c), '-|');
  info.setResponseFlag(ResponseFlag.NoHealthyUpstream);
  info.setResponseFlag(ResponseFlag.UpstreamRetryLimitExceeded);
  info.responseCodeDetails = 'via_upstream';
  assert.equal(format('%RESPONSE_FLAGS%|%RESPONSE_CODE_DETAILS%', c), 'UH,URX|via_upstream');
  assert.equal(parseHeaderFormat('flags %RESPONSE_FLAGS%').readsStreamInfo, true);
  assert.equal(parseHeaderFormat('%RESPONSE_CODE_DETAILS%').readsStreamInfo, true);
  // Escaped, it is text.
  assert.equal(parseHeaderFormat('%%RESPONSE_FLAGS%%').readsStreamInfo, false);
  assert.equal(parseHeaderFormat('%PROTOCOL%').readsStreamInfo, false);
});

test("fmt's {:g} for metadata numbers", () => {
  const cases: [number, string][] = [[0, '0'], [1, '1'], [-2.5, '-2.5'], [100000, '100000'], [1000000, '1e+06'], [123456.7, '123457'], [0.0001, '0.0001'], [0.00001, '1e-05'], [1e100, '1e+100'], [999999.5, '1e+06']];
  for (const [value, text] of cases) assert.equal(shortestG(value), text, String(value));
});

test('a level removes first, then adds; append false replaces; an empty value adds nothing', () => {
  const mutator = new HeaderMutator({
    add: [
      { name: 'x-added', value: 'one', append: true },
      { name: 'x-added', value: 'two', append: true },
      { name: 'x-set', value: 'only', append: false },
      { name: 'x-gone', value: 'back', append: true },
      { name: 'x-empty', value: '', append: true },
    ],
    remove: ['x-gone', 'x-absent'],
  });
  const headers = ['x-set', 'a', 'x-gone', 'b', 'x-keep', 'c', 'x-set', 'd'];
  mutator.apply(headers, context());
  assert.deepEqual(headers, ['x-keep', 'c', 'x-added', 'one', 'x-added', 'two', 'x-set', 'only', 'x-gone', 'back']);
});
