import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatGrpcTimeout, parseGrpcTimeout } from '../../src/http/grpc_timeout';

test('grpc-timeout values in every unit, sub-millisecond ones rounded up', () => {
  assert.equal(parseGrpcTimeout('2H'), 7_200_000);
  assert.equal(parseGrpcTimeout('3M'), 180_000);
  assert.equal(parseGrpcTimeout('4S'), 4000);
  assert.equal(parseGrpcTimeout('5m'), 5);
  assert.equal(parseGrpcTimeout('1500u'), 2);
  assert.equal(parseGrpcTimeout('1000000n'), 1);
  assert.equal(parseGrpcTimeout('1n'), 1);
  for (const bad of ['', '5', 'S', '5s', '-1S', '1.5S']) assert.equal(parseGrpcTimeout(bad), null, bad);
});

test('written in the smallest unit that keeps 8 digits, hours clipped', () => {
  assert.equal(formatGrpcTimeout(200), '200m');
  assert.equal(formatGrpcTimeout(99_999_999), '99999999m');
  assert.equal(formatGrpcTimeout(100_000_000), '100000S');
  assert.equal(formatGrpcTimeout(99_999_999_999 * 1000), '27777777H');
  assert.equal(formatGrpcTimeout(Number.MAX_SAFE_INTEGER), '99999999H');
});
