import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as os from 'node:os';
import { FieldError } from '../../src/config/errors';
import { RequestHead, ResponseHead } from '../../src/http/message';
import { StreamInfo, type SslConnectionInfo } from '../../src/stream_info/stream_info';
import { ManualClock } from '../helpers/manual_clock';
import { ResponseFlag } from '../../src/stream_info/response_flags';
import { DateFormat, DefaultDateFormat } from '../../src/access_log/date_format';
import { DEFAULT_FORMAT, JsonFormatter, TextFormatter } from '../../src/access_log/log_formatter';
import type { FormatContext } from '../../src/access_log/format_context';

// 2016-04-15T20:17:00.310Z
const START = Date.UTC(2016, 3, 15, 20, 17, 0, 310);

function info(ssl: SslConnectionInfo | null = null): StreamInfo {
  const i = new StreamInfo({ id: 42, localAddress: '10.0.0.1:10000', directRemoteAddress: '[2001:db8::7]:5555', requestedServerName: 'sni.example', ssl }, new ManualClock());
  i.start();
  i.startTime = START;
  return i;
}

function request(): RequestHead {
  const r = new RequestHead('POST', '/api/v1/locations', false);
  r.authority = 'locations';
  r.headers.push('x-forwarded-for', '10.0.35.28', 'user-agent', 'nsq2http', 'x-request-id', 'cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2', 'x-multi', 'one', 'x-multi', 'two');
  return r;
}

function response(): ResponseHead {
  const r = new ResponseHead(204, false);
  r.headers.push('x-proxy-upstream-service-time', '100', 'content-type', 'text/plain');
  return r;
}

function context(i = info(), req: RequestHead | null = request(), res: ResponseHead | null = response(), trailers: string[] | null = null): FormatContext {
  return { info: i, request: req, response: res, trailers };
}

const text = (format: string, ctx: FormatContext = context()) => new TextFormatter(format, false).format(ctx);

test('the default format, byte for byte, with a full stream', () => {
  assert.equal(
    DEFAULT_FORMAT,
    '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-PROXY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-PROXY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%"\n',
  );
  const i = info();
  i.protocol = 'HTTP/2';
  i.responseCode = 204;
  i.bytesReceived = 154;
  i.requestComplete = 226.9;
  i.upstreamHost = '10.0.2.1:80';
  assert.equal(
    text(DEFAULT_FORMAT, context(i)),
    '[2016-04-15T20:17:00.310Z] "POST /api/v1/locations HTTP/2" 204 - 154 0 226 100 "10.0.35.28" "nsq2http" "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2" "locations" "10.0.2.1:80"\n',
  );
});

test('the default format of a TCP connection: unset values are -', () => {
  const i = info();
  i.bytesReceived = 3;
  i.bytesSent = 5;
  i.requestComplete = 12;
  i.upstreamHost = '127.0.0.1:9000';
  assert.equal(text(DEFAULT_FORMAT, context(i, null, null)), '[2016-04-15T20:17:00.310Z] "- - -" 0 - 3 5 12 - "-" "-" "-" "-" "127.0.0.1:9000"\n');
});

test('REQ, RESP and TRAILER: alternatives, pseudo-headers, case, the first value, max length', () => {
  const ctx = context(info(), request(), response(), ['grpc-status', '0', 'x-trailer', 'abcdef']);
  assert.equal(text('%REQ(X-PROXY-ORIGINAL-PATH?:PATH)%', ctx), '/api/v1/locations');
  assert.equal(text('%REQ(:PATH?X-PROXY-ORIGINAL-PATH)%', ctx), '/api/v1/locations');
  assert.equal(text('%REQ(:method)% %REQ(:scheme)% %REQ(:authority)% %REQ(host)%', ctx), 'POST http locations locations');
  assert.equal(text('%REQ(X-MULTI)%', ctx), 'one');
  assert.equal(text('%REQ(USER-AGENT):3%', ctx), 'nsq');
  assert.equal(text('%REQ(X-MISSING)%|%REQ(X-MISSING?X-ALSO-MISSING)%', ctx), '-|-');
  assert.equal(text('%RESP(:STATUS)% %RESP(CONTENT-TYPE):4%', ctx), '204 text');
  assert.equal(text('%TRAILER(GRPC-STATUS)% %TRAILER(X-TRAILER):2% %TRAILER(X-NONE)%', ctx), '0 ab -');
  assert.equal(text('%TRAILER(GRPC-STATUS)%', context()), '-');
  const empty = request();
  empty.headers.push('x-empty', '');
  assert.equal(text('[%REQ(X-EMPTY)%]', context(info(), empty)), '[]');
});

test('content-length, which the codecs keep as framing, reads as the header map has it', () => {
  const req = request();
  const res = response();
  assert.equal(text('%REQ(CONTENT-LENGTH)% %RESP(CONTENT-LENGTH)%', context(info(), req, res)), '- -');
  req.contentLength = 12;
  res.contentLength = 0;
  assert.equal(text('%REQ(CONTENT-LENGTH)% %RESP(CONTENT-LENGTH)%', context(info(), req, res)), '12 0');
});

test('START_TIME: the default, strftime in UTC, %s, %f and %1f..%9f', () => {
  assert.equal(text('%START_TIME%'), '2016-04-15T20:17:00.310Z');
  assert.equal(text('%START_TIME()%'), '2016-04-15T20:17:00.310Z');
  assert.equal(text('%START_TIME(%Y/%m/%dT%H:%M:%S%z %s)%'), '2016/04/15T20:17:00+0000 1460751420');
  assert.equal(text('%START_TIME(%s.%3f)%'), '1460751420.310');
  assert.equal(text('%START_TIME(%s.%6f)%'), '1460751420.310000');
  assert.equal(text('%START_TIME(%f)% %START_TIME(%9f)% %START_TIME(%1f)%'), '310000000 310000000 3');
  assert.equal(text('%START_TIME(%a %A %b %B %d %e %j %y %C %I %p %Z)%'), 'Fri Friday Apr April 15 15 106 16 20 08 PM GMT');
  assert.equal(text('%START_TIME(%F %T %D %R %u %w %%)%'), '2016-04-15 20:17:00 04/15/16 20:17 5 5 %');
  assert.equal(text('%START_TIME(%G-W%V %U %W)%'), '2016-W15 15 15');
  assert.equal(new DateFormat('%G %V %g').format(Date.UTC(2021, 0, 1)), '2020 53 20');
  assert.equal(new DateFormat('%c').format(Date.UTC(2016, 3, 5, 1, 2, 3)), 'Tue Apr  5 01:02:03 2016');
  assert.throws(() => text('%START_TIME(%Y%n)%'), /contains newline/);
  assert.throws(() => text('%START_TIME(%Y%En)%'), /contains newline/);
});

test('durations are whole milliseconds, truncated; unset ones are -', () => {
  const i = info();
  assert.equal(text('%DURATION% %REQUEST_DURATION% %RESPONSE_DURATION% %RESPONSE_TX_DURATION%', context(i)), '- - - -');
  i.lastDownstreamRxByteReceived = 1.9;
  i.firstUpstreamRxByteReceived = 10.2;
  i.lastDownstreamTxByteSent = 25.1;
  i.requestComplete = 30.999;
  assert.equal(text('%DURATION% %REQUEST_DURATION% %RESPONSE_DURATION% %RESPONSE_TX_DURATION%', context(i)), '30 1 10 14');
});

test('the response: code (0 when none), details, flags in Envoy order', () => {
  const i = info();
  assert.equal(text('%RESPONSE_CODE% %RESPONSE_CODE_DETAILS% %RESPONSE_FLAGS% %CONNECTION_TERMINATION_DETAILS%', context(i)), '0 - - -');
  i.responseCode = 503;
  i.responseCodeDetails = 'upstream_reset_before_response_started{connection failure}';
  i.connectionTerminationDetails = 'idle timeout';
  i.setResponseFlag(ResponseFlag.UpstreamOverflow);
  i.setResponseFlag(ResponseFlag.NoHealthyUpstream);
  i.setResponseFlag(ResponseFlag.DurationTimeout);
  i.setResponseFlag(ResponseFlag.DownstreamConnectionTermination);
  assert.equal(
    text('%RESPONSE_CODE% %RESPONSE_CODE_DETAILS% %RESPONSE_FLAGS% %CONNECTION_TERMINATION_DETAILS%', context(i)),
    '503 upstream_reset_before_response_started{connection failure} UH,UO,DC,DT idle timeout',
  );
});

test('bytes, protocol, upstream and downstream addresses, names, connection id, hostname', () => {
  const i = info();
  i.bytesReceived = 7;
  i.bytesSent = 9;
  i.protocol = 'HTTP/1.1';
  i.upstreamHost = '127.0.0.2:8080';
  i.upstreamCluster = 'backend';
  i.upstreamLocalAddress = '127.0.0.1:40000';
  i.upstreamTransportFailureReason = 'TLS error: 268435581';
  i.routeName = 'the_route';
  i.trustedClient = { ip: '192.0.2.9', port: 0, internal: false, edge: false };
  assert.equal(
    text(
      '%BYTES_RECEIVED% %BYTES_SENT% %PROTOCOL% %UPSTREAM_HOST% %UPSTREAM_CLUSTER% %UPSTREAM_LOCAL_ADDRESS% %UPSTREAM_TRANSPORT_FAILURE_REASON% %ROUTE_NAME% %CONNECTION_ID% %REQUESTED_SERVER_NAME%',
      context(i),
    ),
    '7 9 HTTP/1.1 127.0.0.2:8080 backend 127.0.0.1:40000 TLS error: 268435581 the_route 42 sni.example',
  );
  assert.equal(
    text(
      '%DOWNSTREAM_REMOTE_ADDRESS% %DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT% %DOWNSTREAM_DIRECT_REMOTE_ADDRESS% %DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT% %DOWNSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT%',
      context(i),
    ),
    '192.0.2.9:0 192.0.2.9 [2001:db8::7]:5555 2001:db8::7 10.0.0.1:10000 10.0.0.1',
  );
  const bare = info();
  bare.upstreamCluster = '';
  assert.equal(text('%PROTOCOL% %UPSTREAM_HOST% %UPSTREAM_CLUSTER% %UPSTREAM_LOCAL_ADDRESS% %UPSTREAM_TRANSPORT_FAILURE_REASON% %ROUTE_NAME%', context(bare)), '- - - - - -');
  assert.equal(text('%HOSTNAME%'), os.hostname());
  assert.equal(text('%LOCAL_REPLY_BODY%|'), '|');
});

test('TLS operators: - without TLS or an empty value, the session facts with it', () => {
  const tls: SslConnectionInfo = {
    peerCertificatePresented: true,
    peerCertificateValidated: true,
    peerSubject: 'CN=client,O=Example',
    peerIssuer: 'CN=ca',
    peerUriSans: ['spiffe://a', 'spiffe://b'],
    peerDnsSans: ['client.example'],
    peerSerial: '0a1b',
    peerFingerprint256: 'ab'.repeat(32),
    peerFingerprint1: 'cd'.repeat(20),
    peerCertificatePem: '-----BEGIN%20CERTIFICATE-----%0A',
    peerValidFrom: new Date(Date.UTC(2020, 0, 2, 3, 4, 5)),
    peerExpiration: new Date(Date.UTC(2030, 0, 2, 3, 4, 5)),
    localSubject: 'CN=proxy',
    localUriSans: [],
    localDnsSans: ['proxy.example'],
    tlsVersion: 'TLSv1.3',
    cipherSuite: 'TLS_AES_128_GCM_SHA256',
    sessionId: 'f00d',
  };
  const all =
    '%DOWNSTREAM_PEER_SUBJECT%|%DOWNSTREAM_PEER_ISSUER%|%DOWNSTREAM_PEER_URI_SAN%|%DOWNSTREAM_LOCAL_URI_SAN%|%DOWNSTREAM_LOCAL_SUBJECT%|%DOWNSTREAM_PEER_SERIAL%|' +
    '%DOWNSTREAM_PEER_FINGERPRINT_256%|%DOWNSTREAM_PEER_FINGERPRINT_1%|%DOWNSTREAM_PEER_CERT%|%DOWNSTREAM_PEER_CERT_V_START%|%DOWNSTREAM_PEER_CERT_V_END(%Y)%|' +
    '%DOWNSTREAM_TLS_VERSION%|%DOWNSTREAM_TLS_CIPHER%|%DOWNSTREAM_TLS_SESSION_ID%';
  assert.equal(text(all, context(info())), Array(14).fill('-').join('|'));
  assert.equal(
    text(all, context(info(tls))),
    `CN=client,O=Example|CN=ca|spiffe://a,spiffe://b|-|CN=proxy|0a1b|${'ab'.repeat(32)}|${'cd'.repeat(20)}|-----BEGIN%20CERTIFICATE-----%0A|2020-01-02T03:04:05.000Z|2030|TLSv1.3|TLS_AES_128_GCM_SHA256|f00d`,
  );
});

test('DYNAMIC_METADATA: a value as JSON, a namespace whole, - when absent, max length', () => {
  const i = info();
  assert.equal(text('%DYNAMIC_METADATA(ns:key)%', context(i)), '-');
  i.dynamicMetadata = new Map([['ns', { key: 'value', nested: { n: 1, list: [1, 'a'] }, nothing: null }]]);
  assert.equal(text('%DYNAMIC_METADATA(ns:key)%', context(i)), '"value"');
  assert.equal(text('%DYNAMIC_METADATA(ns:nested:n)% %DYNAMIC_METADATA(ns:nested:list)%', context(i)), '1 [1,"a"]');
  assert.equal(text('%DYNAMIC_METADATA(ns)%', context(i)), '{"key":"value","nested":{"n":1,"list":[1,"a"]},"nothing":null}');
  assert.equal(text('%DYNAMIC_METADATA(ns:nested):6%', context(i)), '{"n":1');
  assert.equal(text('%DYNAMIC_METADATA(ns:key:deeper)% %DYNAMIC_METADATA(ns:missing)% %DYNAMIC_METADATA(other)% %DYNAMIC_METADATA(ns:nothing)%', context(i)), '- - - -');
});

test('literal text, adjacent operators, an empty format', () => {
  assert.equal(text(''), '');
  assert.equal(text('plain text'), 'plain text');
  assert.equal(text('%PROTOCOL%%RESPONSE_CODE%x'), '-0x');
});

test("a line is bytes: header values as they came, the configuration's and Node's Unicode as UTF-8", () => {
  const bytes = (line: string) => Buffer.from(line, 'latin1').toString('utf8');
  const req = request();
  // "café" off the wire: its UTF-8 bytes, one character each; and a byte that is no UTF-8 at all.
  req.headers.push('x-name', 'caf\xc3\xa9', 'x-raw', '\xff');
  const i = info();
  i.routeName = 'route→1';
  i.upstreamCluster = 'clüster';
  i.responseCodeDetails = 'détails';
  i.dynamicMetadata = new Map([['ns', { 'clé': 'valeur ☃' }]]);
  const ctx = context(i, req);
  const line = text('« %REQ(X-NAME)% » %ROUTE_NAME% %UPSTREAM_CLUSTER% %RESPONSE_CODE_DETAILS% %DYNAMIC_METADATA(ns)% %START_TIME(%Y→%m)%', ctx);
  assert.equal(bytes(line), '« café » route→1 clüster détails {"clé":"valeur ☃"} 2016→04');
  assert.equal(text('%REQ(X-RAW)%', ctx), '\xff');
  assert.equal(text('%REQ(X-NAME):4%', ctx), 'caf\xc3', 'a length limit counts bytes, as Envoy cuts its string');
  const json = new JsonFormatter({ 'nom→': '%REQ(X-NAME)%', route: '%ROUTE_NAME%', meta: '%DYNAMIC_METADATA(ns)%' }, true, false).format(ctx);
  assert.equal(bytes(json), '{"nom→":"café","route":"route→1","meta":{"clé":"valeur ☃"}}\n');
  assert.equal(bytes(new JsonFormatter({ meta: '%DYNAMIC_METADATA(ns)%' }, false, false).format(ctx)), '{"meta":"{\\"clé\\":\\"valeur ☃\\"}"}\n');
});

test('malformed formats and unknown operators are refused with Envoy 1.16 messages', () => {
  const refused: [string, RegExp][] = [
    ['100%', /Incorrect configuration: 100%\. Couldn't find valid command at position 3/],
    ['%%', /Couldn't find valid command at position 0/],
    ['%REQ(X%', /Couldn't find valid command at position 0/],
    ['%lower%', /Couldn't find valid command/],
    ['%NO_SUCH_OPERATOR%', /Not supported field in StreamInfo: NO_SUCH_OPERATOR/],
    ['%DURATION:3%', /Not supported field in StreamInfo: DURATION:3/],
    ['%REQ%', /Not supported field in StreamInfo: REQ/],
    ['%REQ(A?B?C)%', /More than 1 alternative header specified in token: REQ\(A\?B\?C\)/],
    ['%FILTER_STATE(key)%', /no filter state/],
    ['%DOWNSTREAM_PEER_DNS_SAN%', /Not supported field in StreamInfo/],
    ['%REQUEST_TX_DURATION%', /Not supported field in StreamInfo/],
  ];
  for (const [format, message] of refused) {
    assert.throws(() => text(format), (e: unknown) => e instanceof FieldError && message.test(e.message), format);
  }
});

test('json_format: strings, - for unset, nesting, keys in the configured order, one line', () => {
  const i = info();
  i.responseCode = 200;
  const formatter = new JsonFormatter(
    { zeta: '%RESPONSE_CODE%', alpha: '%PROTOCOL%', nested: { method: '%REQ(:METHOD)%', both: '%REQ(:METHOD)% %RESPONSE_CODE%' }, literal: 'x"y' },
    false,
    false,
  );
  assert.equal(formatter.format(context(i)), '{"zeta":"200","alpha":"-","nested":{"method":"POST","both":"POST 200"},"literal":"x\\"y"}\n');
});

test('typed_json_format: numbers stay numbers, unset is null; several pieces make a string', () => {
  const i = info();
  i.responseCode = 200;
  i.requestComplete = 5.5;
  i.dynamicMetadata = new Map([['ns', { obj: { a: 1 } }]]);
  const formatter = new JsonFormatter(
    { code: '%RESPONSE_CODE%', duration: '%DURATION%', protocol: '%PROTOCOL%', meta: '%DYNAMIC_METADATA(ns:obj)%', mixed: '%RESPONSE_CODE%/%PROTOCOL%', time: '%START_TIME(%s)%' },
    true,
    false,
  );
  assert.equal(formatter.format(context(i)), '{"code":200,"duration":5,"protocol":null,"meta":{"a":1},"mixed":"200/-","time":"1460751420"}\n');
});

test('omit_empty_values: unset keys are left out of JSON, empty in text', () => {
  const i = info();
  const typed = new JsonFormatter({ code: '%RESPONSE_CODE%', protocol: '%PROTOCOL%', nested: { host: '%UPSTREAM_HOST%' }, mixed: 'a%PROTOCOL%b' }, true, true);
  assert.equal(typed.format(context(i)), '{"code":0,"nested":{},"mixed":"ab"}\n');
  const strings = new JsonFormatter({ code: '%RESPONSE_CODE%', protocol: '%PROTOCOL%' }, false, true);
  assert.equal(strings.format(context(i)), '{"code":"0"}\n');
  assert.equal(new TextFormatter('[%PROTOCOL%]', true).format(context(i)), '[]');
});

test('json formats: a value that is neither a string nor an object is refused at its key', () => {
  assert.throws(
    () => new JsonFormatter({ ok: '%PROTOCOL%', nested: { bad: 5 } }, false, false),
    (e: unknown) => e instanceof FieldError && e.fieldPath === '["nested"]["bad"]' && /Only string values or nested structs/.test(e.reason),
  );
  assert.throws(
    () => new JsonFormatter({ list: ['%PROTOCOL%'] }, true, false),
    (e: unknown) => e instanceof FieldError && e.fieldPath === '["list"]',
  );
  assert.throws(
    () => new JsonFormatter({ op: '%UNKNOWN%' }, true, false),
    (e: unknown) => e instanceof FieldError && e.fieldPath === '["op"]' && /Not supported field in StreamInfo: UNKNOWN/.test(e.reason),
  );
});

test("START_TIME's default format is toISOString's, the second made once and the milliseconds each time", () => {
  const format = new DefaultDateFormat();
  const base = Date.UTC(2016, 3, 15, 20, 17, 0);
  for (const ms of [base, base + 7, base + 42, base + 310, base + 999, base + 1000, base + 1005, base - 1, base + 86_400_000 + 65]) {
    assert.equal(format.format(ms), new Date(ms).toISOString(), String(ms));
  }
});
