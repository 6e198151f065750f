// B3 propagation as Envoy 1.16's Zipkin tracer reads and writes it: the x-b3-* headers and the
// single b3 header, 64- and 128-bit trace ids, the sampling flags, and what is malformed.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { extractSampled, extractSpanContext, injectB3, MALFORMED, randomId } from '../../src/tracing/zipkin/b3';
import { seededRandom } from '../helpers/seeded_random';

test('the sampling decision: the b3 flag, then x-b3-flags debug, then x-b3-sampled, else the connection manager', () => {
  assert.equal(extractSampled([], true), true);
  assert.equal(extractSampled([], false), false);
  assert.equal(extractSampled(['x-b3-sampled', '1'], false), true);
  assert.equal(extractSampled(['x-b3-sampled', 'true'], false), true);
  assert.equal(extractSampled(['x-b3-sampled', '0'], true), false);
  assert.equal(extractSampled(['x-b3-sampled', 'yes'], true), false);
  assert.equal(extractSampled(['x-b3-flags', '1', 'x-b3-sampled', '0'], false), true);
  assert.equal(extractSampled(['b3', '0'], true), false);
  assert.equal(extractSampled(['b3', 'd'], false), true);
  assert.equal(extractSampled(['b3', '80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1'], false), true);
  assert.equal(extractSampled(['b3', '80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-0-05e3ac9a4f6e3b90'], true), false);
  assert.equal(extractSampled(['b3', 'e457b5a2e4d86bd1-e457b5a2e4d86bd1-0', 'x-b3-sampled', '1'], true), false);
  // A b3 header of no known length, or no flag where one goes: the connection manager decides.
  assert.equal(extractSampled(['b3', 'e457b5a2e4d86bd1-e457b5a2e4d86bd1'], false), false);
  assert.equal(extractSampled(['b3', 'e457b5a2e4d86bd1-e457b5a2e4d86bd1-x'], true), true);
});

test('x-b3-* headers name the calling span; ids come back as 16 lower-case hex digits', () => {
  assert.equal(extractSpanContext([], true), null);
  assert.equal(extractSpanContext(['x-b3-traceid', '463ac35c9f6413ad'], true), null);
  assert.deepEqual(extractSpanContext(['x-b3-traceid', '463AC35C9F6413AD', 'x-b3-spanid', 'a2fb4a1d1a96d312', 'x-b3-parentspanid', '1f'], true), {
    traceIdHigh: null,
    traceId: '463ac35c9f6413ad',
    spanId: 'a2fb4a1d1a96d312',
    parentId: '000000000000001f',
    sampled: true,
  });
  const wide = extractSpanContext(['x-b3-traceid', '0af7651916cd43dd8448eb211c80319c', 'x-b3-spanid', 'b7ad6b7169203331'], false);
  assert.deepEqual(wide, { traceIdHigh: '0af7651916cd43dd', traceId: '8448eb211c80319c', spanId: 'b7ad6b7169203331', parentId: null, sampled: false });
  // A zero upper half is a 64-bit id, a zero parent none, as Envoy keeps them in integers.
  const zeros = extractSpanContext(['x-b3-traceid', '00000000000000008448eb211c80319c', 'x-b3-spanid', '1', 'x-b3-parentspanid', '0'], true);
  assert.deepEqual(zeros, { traceIdHigh: null, traceId: '8448eb211c80319c', spanId: '0000000000000001', parentId: null, sampled: true });
});

test('malformed ids make no context: the request is not traced', () => {
  for (const headers of [
    ['x-b3-traceid', 'not-hex', 'x-b3-spanid', '1'],
    ['x-b3-traceid', '0123456789abcdef0', 'x-b3-spanid', '1'],
    ['x-b3-traceid', '1', 'x-b3-spanid', ''],
    ['x-b3-traceid', '1', 'x-b3-spanid', '2', 'x-b3-parentspanid', 'zz'],
    ['x-b3-traceid', 'g'.repeat(32), 'x-b3-spanid', '2'],
  ]) {
    assert.equal(extractSpanContext(headers, true), MALFORMED, headers.join(' '));
  }
});

test('the single b3 header: ids, flag and parent; a lone flag names no span', () => {
  assert.deepEqual(extractSpanContext(['b3', '80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90'], true), {
    traceIdHigh: '80f198ee56343ba8',
    traceId: '64fe8b2a57d3eff7',
    spanId: 'e457b5a2e4d86bd1',
    parentId: '05e3ac9a4f6e3b90',
    sampled: true,
  });
  assert.deepEqual(extractSpanContext(['b3', '64fe8b2a57d3eff7-e457b5a2e4d86bd1'], false), {
    traceIdHigh: null,
    traceId: '64fe8b2a57d3eff7',
    spanId: 'e457b5a2e4d86bd1',
    parentId: null,
    sampled: false,
  });
  assert.equal(extractSpanContext(['b3', '1'], true), null);
  // The b3 header is read before the x-b3-* ones.
  assert.equal(extractSpanContext(['b3', '0', 'x-b3-traceid', '1', 'x-b3-spanid', '2'], true), null);
  for (const b3 of ['x', '', '64fe8b2a57d3eff7', '64fe8b2a57d3eff7-e457b5a2e4d86bd1-', '64fe8b2a57d3eff7-e457b5a2e4d86bd1-2', '64fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3', '64fe8b2a57d3eff7+e457b5a2e4d86bd1', 'z'.repeat(80)]) {
    assert.equal(extractSpanContext(['b3', b3], true), MALFORMED, b3);
  }
});

test('our span goes upstream in x-b3-* headers, replacing the caller`s', () => {
  const headers = ['x-b3-traceid', 'old', 'x-b3-spanid', 'old', 'x-b3-sampled', '1', 'accept', '*/*'];
  injectB3(headers, { traceIdHigh: '80f198ee56343ba8', traceId: '64fe8b2a57d3eff7', spanId: 'e457b5a2e4d86bd1', parentId: '05e3ac9a4f6e3b90', sampled: false });
  assert.deepEqual(headers, [
    'accept',
    '*/*',
    'x-b3-traceid',
    '80f198ee56343ba864fe8b2a57d3eff7',
    'x-b3-spanid',
    'e457b5a2e4d86bd1',
    'x-b3-parentspanid',
    '05e3ac9a4f6e3b90',
    'x-b3-sampled',
    '0',
  ]);
  const root = ['x-b3-parentspanid', 'kept'];
  injectB3(root, { traceIdHigh: null, traceId: '64fe8b2a57d3eff7', spanId: '64fe8b2a57d3eff7', parentId: null, sampled: true });
  // No parent of ours: the caller's is left as it was.
  assert.deepEqual(root, ['x-b3-parentspanid', 'kept', 'x-b3-traceid', '64fe8b2a57d3eff7', 'x-b3-spanid', '64fe8b2a57d3eff7', 'x-b3-sampled', '1']);
});

test('random ids are 16 hex digits', () => {
  const random = seededRandom(7);
  for (let i = 0; i < 100; i++) assert.match(randomId(() => Math.floor(random() * 0x100000000)), /^[0-9a-f]{16}$/);
});
