// The wire-format parts of the checkers: the HTTP request, the TCP payload match, the gRPC
// request and response messages.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HttpHealthCheck } from '../../src/config/model';
import { ResponseHead } from '../../src/http/message';
import { grpcCheckRequest, servingStatus } from '../../src/upstream/supervisor/health_check/grpc_probe';
import { httpCheckOutcome, httpCheckRequest } from '../../src/upstream/supervisor/health_check/http_probe';
import { receivedAll } from '../../src/upstream/supervisor/health_check/tcp_probe';
import { HTTP_HEALTH_CHECKER } from '../../src/extensions/health_checkers/http';
import type { ConfigExtensions } from '../../src/config/extension';

const HTTP: HttpHealthCheck = { kind: 'http', host: '', path: '/hc', expectedStatuses: [[200, 201]], requestHeadersToAdd: [], requestHeadersToRemove: [], serviceNameMatcher: null };

test('HTTP request: the cluster name as host, proxy/HC as user agent; removals first, then additions', () => {
  assert.equal(httpCheckRequest(HTTP, 'backend').toString(), 'GET /hc HTTP/1.1\r\nhost: backend\r\nuser-agent: proxy/HC\r\n\r\n');
  const custom: HttpHealthCheck = {
    ...HTTP,
    host: 'hc.example',
    requestHeadersToRemove: ['user-agent'],
    requestHeadersToAdd: [
      { key: 'X-A', value: '1', append: true },
      { key: 'x-a', value: '2', append: true },
      { key: 'user-agent', value: 'probe', append: false },
    ],
  };
  assert.equal(httpCheckRequest(custom, 'backend').toString(), 'GET /hc HTTP/1.1\r\nhost: hc.example\r\nx-a: 1\r\nx-a: 2\r\nuser-agent: probe\r\n\r\n');
});

test("HTTP request: the configuration's text goes out as UTF-8, as Envoy sends its strings' bytes", () => {
  const model = HTTP_HEALTH_CHECKER.model(
    { host: 'hôte', path: '/santé', request_headers_to_add: [{ header: { key: 'x-zone', value: 'zürich' } }] },
    { extensions: null as unknown as ConfigExtensions },
  ) as HttpHealthCheck;
  assert.equal(httpCheckRequest(model, 'backend').toString('utf8'), 'GET /santé HTTP/1.1\r\nhost: hôte\r\nuser-agent: proxy/HC\r\nx-zone: zürich\r\n\r\n');
  assert.equal(httpCheckRequest(HTTP, 'clüster').toString('utf8'), 'GET /hc HTTP/1.1\r\nhost: clüster\r\nuser-agent: proxy/HC\r\n\r\n');
});

test("HTTP request: the cluster's header_key_format proper_case_words spells the names, as its codec would", () => {
  assert.equal(httpCheckRequest(HTTP, 'backend', 'proper_case_words').toString(), 'GET /hc HTTP/1.1\r\nHost: backend\r\nUser-Agent: proxy/HC\r\n\r\n');
});

function head(status: number, headers: string[] = []): ResponseHead {
  const h = new ResponseHead(status, false);
  h.headers.push(...headers);
  return h;
}

test('HTTP outcome: expected statuses are half-open ranges; degraded; the checked cluster', () => {
  assert.deepEqual(httpCheckOutcome(head(200), HTTP, null), { kind: 'success', degraded: false });
  assert.deepEqual(httpCheckOutcome(head(201), HTTP, null), { kind: 'failure', type: 'ACTIVE' });
  assert.deepEqual(httpCheckOutcome(head(200, ['x-proxy-degraded', '']), HTTP, null), { kind: 'success', degraded: true });
  const isBackend = (name: string) => name === 'backend';
  assert.deepEqual(httpCheckOutcome(head(200, ['x-proxy-upstream-healthchecked-cluster', 'backend']), HTTP, isBackend), { kind: 'success', degraded: false });
  // No header: the empty name is matched, as Envoy does.
  assert.deepEqual(httpCheckOutcome(head(200), HTTP, isBackend), { kind: 'failure', type: 'ACTIVE' });
});

test('TCP receive: every segment, in order, each after the one before', () => {
  const seg = (s: string) => Buffer.from(s);
  assert.ok(receivedAll([seg('ab'), seg('cd')], seg('xxabyycdzz')));
  assert.ok(!receivedAll([seg('cd'), seg('ab')], seg('xxabyycdzz')));
  assert.ok(!receivedAll([seg('ab'), seg('ab')], seg('ab')));
  assert.ok(receivedAll([], seg('')));
});

test('gRPC: the request message, and the serving status of a response', () => {
  assert.deepEqual([...grpcCheckRequest('')], [0, 0, 0, 0, 0]);
  assert.deepEqual([...grpcCheckRequest('svc')], [0, 0, 0, 0, 5, 0x0a, 3, 0x73, 0x76, 0x63]);
  const frame = (bytes: number[]) => Buffer.from([0, 0, 0, 0, bytes.length, ...bytes]);
  assert.equal(servingStatus(frame([0x08, 0x01])), 1);
  assert.equal(servingStatus(frame([0x08, 0x02])), 2);
  // UNKNOWN is the default, left out on the wire; unknown fields are skipped.
  assert.equal(servingStatus(frame([])), 0);
  assert.equal(servingStatus(frame([0x12, 0x01, 0x41, 0x08, 0x01])), 1);
  // Compressed, truncated, or two messages: not an answer.
  assert.equal(servingStatus(Buffer.from([1, 0, 0, 0, 2, 0x08, 0x01])), null);
  assert.equal(servingStatus(Buffer.from([0, 0, 0, 0, 3, 0x08, 0x01])), null);
  assert.equal(servingStatus(Buffer.concat([frame([0x08, 0x01]), frame([0x08, 0x01])])), null);
  assert.equal(servingStatus(frame([0x08, 0x81])), null);
});
