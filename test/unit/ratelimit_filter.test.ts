// The rate limit filter's pure parts: the descriptor each action makes of a request (and which
// rate_limits count), the x-ratelimit-* headers from descriptor statuses, and the service's
// messages: a request as the service decodes it, an answer as the filter reads it, in gRPC frames.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RateLimitAction, RateLimitPolicy } from '../../src/config/model';
import { protoSchema } from '../../src/config/schema';
import { countsVirtualHost, type Descriptor, RateLimitPolicyEntry, RateLimitPolicySet, vhRateLimitsOption } from '../../src/filters/http/rate_limit_descriptors';
import { type DescriptorStatus, RateLimitMessages } from '../../src/filters/http/rate_limit_messages';
import { xRateLimitHeaders } from '../../src/filters/http/x_ratelimit_headers';
import { grpcFrame, grpcMessages } from '../../src/http/grpc_frame';
import { RequestHead } from '../../src/http/message';

function head(headers: string[] = [], authority = 'example.com'): RequestHead {
  const h = new RequestHead('GET', '/users/7', false);
  h.authority = authority;
  h.headers.push(...headers);
  return h;
}

const inputs = (h: RequestHead, remoteAddress = '10.1.2.3') => ({ head: h, serviceCluster: 'edge', routeCluster: 'users', remoteAddress });
const describe = (actions: RateLimitAction[], h = head(), remoteAddress?: string): Descriptor | null =>
  new RateLimitPolicyEntry({ stage: 0, disableKey: '', actions }).descriptor(inputs(h, remoteAddress));
const text = (descriptor: Descriptor | null) => descriptor?.map(({ key, value }) => `${key}=${value}`) ?? null;

test('each action adds its entry, in order', () => {
  const descriptor = describe(
    [
      { kind: 'source_cluster' },
      { kind: 'destination_cluster' },
      { kind: 'remote_address' },
      { kind: 'generic_key', descriptorKey: 'generic_key', descriptorValue: 'g' },
      { kind: 'generic_key', descriptorKey: 'tier', descriptorValue: 'free' },
      { kind: 'request_headers', headerName: 'x-user', descriptorKey: 'user', skipIfAbsent: false },
      { kind: 'request_headers', headerName: ':authority', descriptorKey: 'host', skipIfAbsent: false },
      { kind: 'header_value_match', descriptorValue: 'get', expectMatch: true, headers: [{ name: ':method', invert: false, specifier: { kind: 'exact', value: 'GET' } }] },
    ],
    head(['x-user', 'ada', 'x-user', 'bob']),
  );
  assert.deepEqual(text(descriptor), [
    'source_cluster=edge',
    'destination_cluster=users',
    'remote_address=10.1.2.3',
    'generic_key=g',
    'tier=free',
    // The first value of a repeated header.
    'user=ada',
    'host=example.com',
    'header_match=get',
  ]);
});

test('an action without its entry makes no descriptor, unless skip_if_absent lets the others go', () => {
  const user = (skipIfAbsent: boolean): RateLimitAction => ({ kind: 'request_headers', headerName: 'x-user', descriptorKey: 'user', skipIfAbsent });
  const key: RateLimitAction = { kind: 'generic_key', descriptorKey: 'generic_key', descriptorValue: 'k' };
  assert.equal(describe([key, user(false)]), null);
  assert.deepEqual(text(describe([key, user(true)])), ['generic_key=k']);
  // A client that is no IP address (a Unix socket's peer) has no remote_address.
  assert.equal(describe([{ kind: 'remote_address' }], head(), '/run/proxy.sock'), null);
  assert.deepEqual(text(describe([{ kind: 'remote_address' }], head(), '::1')), ['remote_address=::1']);
  const present = { name: 'x-admin', invert: false, specifier: { kind: 'present' } } as const;
  assert.equal(describe([{ kind: 'header_value_match', descriptorValue: 'admin', expectMatch: true, headers: [present] }]), null);
  assert.deepEqual(text(describe([{ kind: 'header_value_match', descriptorValue: 'visitor', expectMatch: false, headers: [present] }])), ['header_match=visitor']);
  assert.equal(describe([{ kind: 'header_value_match', descriptorValue: 'visitor', expectMatch: false, headers: [present] }], head(['x-admin', '1'])), null);
});

test("a policy set gives the descriptors of its entries of the filter's stage the runtime leaves on", () => {
  const policy = (stage: number, disableKey: string, value: string): RateLimitPolicy => ({ stage, disableKey, actions: [{ kind: 'generic_key', descriptorKey: 'generic_key', descriptorValue: value }] });
  const set = new RateLimitPolicySet([policy(0, '', 'a'), policy(1, '', 'b'), policy(0, 'off', 'c'), policy(0, 'on', 'd')]);
  const asked: string[] = [];
  const enabled = (key: string) => {
    asked.push(key);
    return key !== 'ratelimit.off.http_filter_enabled';
  };
  const out: Descriptor[] = [];
  set.collect(0, inputs(head()), enabled, out);
  assert.deepEqual(out.map(text), [['generic_key=a'], ['generic_key=d']]);
  assert.deepEqual(asked, ['ratelimit.off.http_filter_enabled', 'ratelimit.on.http_filter_enabled']);
  const stageOne: Descriptor[] = [];
  set.collect(1, inputs(head()), enabled, stageOne);
  assert.deepEqual(stageOne.map(text), [['generic_key=b']]);
});

test("whether a virtual host's rate_limits count: include_vh_rate_limits, else the per-route option, else only for a route without its own", () => {
  assert.equal(vhRateLimitsOption(true, { vhRateLimits: 'IGNORE' }), 'INCLUDE');
  assert.equal(vhRateLimitsOption(false, { vhRateLimits: 'IGNORE' }), 'IGNORE');
  assert.equal(vhRateLimitsOption(false, undefined), 'OVERRIDE');
  assert.deepEqual(
    (['OVERRIDE', 'INCLUDE', 'IGNORE'] as const).map((option) => [countsVirtualHost(option, false), countsVirtualHost(option, true)]),
    [
      [true, false],
      [true, true],
      [false, false],
    ],
  );
});

const status = (requestsPerUnit: number, unit: string, limitRemaining: number, resetSeconds: number, name = ''): DescriptorStatus => ({
  currentLimit: { requestsPerUnit, unit, name },
  limitRemaining,
  resetSeconds,
});

test('x-ratelimit-*: the status with the fewest requests left, and a quota policy per status with a known unit', () => {
  assert.deepEqual(xRateLimitHeaders([status(10, 'MINUTE', 7, 30, 'per-ip'), status(1000, 'HOUR', 2, 900), status(5, 'SECOND', 2, 1)]), [
    'x-ratelimit-limit',
    '1000, 10;w=60;name="per-ip", 1000;w=3600, 5;w=1',
    'x-ratelimit-remaining',
    '2',
    'x-ratelimit-reset',
    '900',
  ]);
  // A day's window; a unit the draft cannot name (MONTH) still counts for the fewest remaining.
  assert.deepEqual(xRateLimitHeaders([status(3, 'DAY', 1, 5), status(9, 'MONTH', 0, 60)]), ['x-ratelimit-limit', '9, 3;w=86400', 'x-ratelimit-remaining', '0', 'x-ratelimit-reset', '60']);
  // Statuses without a current limit give nothing.
  assert.deepEqual(xRateLimitHeaders([{ currentLimit: null, limitRemaining: 0, resetSeconds: 0 }]), []);
  assert.deepEqual(xRateLimitHeaders([]), []);
});

test("the service's messages: a request as the service decodes it, in one gRPC frame", () => {
  const schema = protoSchema();
  const messages = new RateLimitMessages(schema);
  const bytes = messages.encodeRequest('edge', [[{ key: 'generic_key', value: 'a' }], [{ key: 'user', value: 'ada' }, { key: 'remote_address', value: '10.0.0.1' }]]);
  const framed = grpcFrame(bytes);
  assert.deepEqual([framed[0], framed.readUInt32BE(1)], [0, bytes.length]);
  const [message] = grpcMessages(framed)!;
  const type = schema.root.lookupType('envoy.service.ratelimit.v3.RateLimitRequest');
  // hits_addend unset: one hit.
  assert.deepEqual(type.toObject(type.decode(message!)), {
    domain: 'edge',
    descriptors: [{ entries: [{ key: 'generic_key', value: 'a' }] }, { entries: [{ key: 'user', value: 'ada' }, { key: 'remote_address', value: '10.0.0.1' }] }],
  });
});

test("the service's messages: what the filter reads of an answer, and what it refuses", () => {
  const schema = protoSchema();
  const messages = new RateLimitMessages(schema);
  const type = schema.root.lookupType('envoy.service.ratelimit.v3.RateLimitResponse');
  const encode = (answer: Record<string, unknown>) => Buffer.from(type.encode(type.fromObject(answer)).finish());
  const answer = messages.decodeResponse(
    encode({
      overall_code: 'OVER_LIMIT',
      statuses: [{ code: 'OVER_LIMIT', current_limit: { requests_per_unit: 5, unit: 'MINUTE', name: 'n' }, limit_remaining: 0, duration_until_reset: { seconds: 42, nanos: 900_000_000 } }, { code: 'OK' }],
      // A header no message could carry is dropped: a name that is no token, a value with a line break.
      response_headers_to_add: [{ key: 'X-Limit', value: 'a' }, { key: 'bad name', value: 'b' }, { key: 'x-split', value: 'c\r\nx-injected: 1' }],
      // A value is bytes on the wire: the service's Unicode goes as UTF-8.
      request_headers_to_add: [{ key: 'x-plan', value: 'gold' }, { key: 'x-zone', value: 'zürich' }],
    }),
  );
  assert.deepEqual(answer, {
    overLimit: true,
    statuses: [
      { currentLimit: { requestsPerUnit: 5, unit: 'MINUTE', name: 'n' }, limitRemaining: 0, resetSeconds: 42 },
      { currentLimit: null, limitRemaining: 0, resetSeconds: 0 },
    ],
    responseHeaders: ['x-limit', 'a'],
    requestHeaders: ['x-plan', 'gold', 'x-zone', Buffer.from('zürich').toString('latin1')],
  });
  // Any code but OVER_LIMIT lets the request on, as Envoy reads it.
  assert.equal(messages.decodeResponse(encode({ overall_code: 'OK' }))!.overLimit, false);
  assert.equal(messages.decodeResponse(Buffer.alloc(0))!.overLimit, false);
  // Bytes that are no RateLimitResponse fail the call.
  assert.equal(messages.decodeResponse(Buffer.from([0x0a, 0xff])), null);
});
