// The epoch-to-epoch messages: proto-JSON-shaped payloads with a protocol version, descriptors
// paired with the reply that announces one, everything else unrecognized.

import { test } from 'node:test';
import * as assert from 'node:assert/strict';

import {
  decodeMessage,
  describeMessage,
  encodeMessage,
  HOT_RESTART_PROTOCOL_VERSION,
  HotRestartMessage,
  tcpListenAddress,
} from '../../src/hot_restart/messages';

function roundTrip(message: HotRestartMessage, receivedFds: number[] = []) {
  const { payload } = encodeMessage(message);
  return decodeMessage(payload, receivedFds);
}

function decodeJson(value: unknown, fds: number[] = []) {
  return decodeMessage(Buffer.from(JSON.stringify(value)), fds);
}

test('requests travel as the proto JSON of their oneof, with the protocol version', () => {
  const { payload, fds } = encodeMessage({ kind: 'request', request: { type: 'pass_listen_socket', address: 'tcp://127.0.0.1:80', workerIndex: null } });
  assert.deepEqual(JSON.parse(payload.toString()), {
    version: HOT_RESTART_PROTOCOL_VERSION,
    request: { pass_listen_socket: { address: 'tcp://127.0.0.1:80' } },
  });
  assert.deepEqual(fds, []);
  // A reuse_port listener's sockets are asked for by worker index.
  const byIndex: HotRestartMessage = { kind: 'request', request: { type: 'pass_listen_socket', address: 'tcp://127.0.0.1:80', workerIndex: 1 } };
  assert.deepEqual(JSON.parse(encodeMessage(byIndex).payload.toString()).request, { pass_listen_socket: { address: 'tcp://127.0.0.1:80', worker_index: 1 } });
  assert.deepEqual(roundTrip(byIndex), { message: byIndex, unusedFds: [] });
  assert.equal(decodeJson({ version: 1, request: { pass_listen_socket: { address: 'tcp://127.0.0.1:80', worker_index: -1 } } }).message.kind, 'unrecognized');
  for (const type of ['shutdown_admin', 'drain_listeners', 'terminate'] as const) {
    const message: HotRestartMessage = { kind: 'request', request: { type } };
    assert.deepEqual(JSON.parse(encodeMessage(message).payload.toString()), { version: 1, request: { [type]: {} } });
    assert.deepEqual(roundTrip(message), { message, unusedFds: [] });
  }
});

test('a pass_listen_socket reply attaches its descriptor and the receiver gets its own copy', () => {
  const { payload, fds } = encodeMessage({ kind: 'reply', reply: { type: 'pass_listen_socket', fd: 12 } });
  assert.deepEqual(fds, [12]);
  assert.deepEqual(JSON.parse(payload.toString()).reply, { pass_listen_socket: { fd: 12 } });
  assert.deepEqual(decodeMessage(payload, [31]), {
    message: { kind: 'reply', reply: { type: 'pass_listen_socket', fd: 31 } },
    unusedFds: [],
  });
});

test('a pass_listen_socket reply without a socket carries fd -1 and no descriptor', () => {
  const message: HotRestartMessage = { kind: 'reply', reply: { type: 'pass_listen_socket', fd: null } };
  const { payload, fds } = encodeMessage(message);
  assert.deepEqual(JSON.parse(payload.toString()).reply, { pass_listen_socket: { fd: -1 } });
  assert.deepEqual(fds, []);
  assert.deepEqual(roundTrip(message), { message, unusedFds: [] });
});

test('descriptors that no reply claims are handed back to be closed', () => {
  const shutdown: HotRestartMessage = { kind: 'reply', reply: { type: 'shutdown_admin', originalStartTimeUnixSeconds: 1_600_000_000 } };
  assert.deepEqual(roundTrip(shutdown, [40, 41]), { message: shutdown, unusedFds: [40, 41] });
  const passed = roundTrip({ kind: 'reply', reply: { type: 'pass_listen_socket', fd: 9 } }, [40, 41]);
  assert.deepEqual(passed.unusedFds, [41]);
});

test('a reply announcing a descriptor that did not come is unrecognized', () => {
  const { message } = decodeJson({ version: 1, reply: { pass_listen_socket: { fd: 5 } } });
  assert.deepEqual(message, { kind: 'unrecognized', reason: 'pass_listen_socket reply without its descriptor' });
});

test('didnt_recognize_your_last_message round-trips', () => {
  const message: HotRestartMessage = { kind: 'didnt_recognize_your_last_message' };
  assert.deepEqual(JSON.parse(encodeMessage(message).payload.toString()), { version: 1, didnt_recognize_your_last_message: true });
  assert.deepEqual(roundTrip(message).message, message);
});

test('another protocol version is unrecognized, whatever it says', () => {
  const { message } = decodeJson({ version: 2, request: { shutdown_admin: {} } });
  assert.equal(message.kind, 'unrecognized');
  assert.match(describeMessage(message), /protocol version 2, this process speaks 1/);
  assert.equal(decodeJson({ request: { shutdown_admin: {} } }).message.kind, 'unrecognized');
});

test("Envoy's stats request, unknown fields and malformed bodies are unrecognized", () => {
  const cases: [unknown, RegExp][] = [
    [{ version: 1, request: { stats: {} } }, /unknown request "stats"/],
    [{ version: 1, reply: { stats: {} } }, /unknown reply "stats"/],
    [{ version: 1, gossip: true }, /unknown field "gossip"/],
    [{ version: 1 }, /exactly one field, got none/],
    [{ version: 1, request: { terminate: {} }, reply: {} }, /exactly one field, got request, reply/],
    [{ version: 1, request: { terminate: {}, drain_listeners: {} } }, /exactly one field/],
    [{ version: 1, request: { pass_listen_socket: { address: 80 } } }, /address is not a string/],
    [{ version: 1, request: { terminate: [] } }, /terminate is not an object/],
    [{ version: 1, reply: { shutdown_admin: { original_start_time_unix_seconds: -1 } } }, /non-negative integer/],
    [{ version: 1, didnt_recognize_your_last_message: false }, /is not true/],
    [[1, 2], /message is not an object/],
  ];
  for (const [value, reason] of cases) {
    const { message } = decodeJson(value);
    assert.equal(message.kind, 'unrecognized', JSON.stringify(value));
    assert.match(describeMessage(message), reason);
  }
  assert.deepEqual(decodeMessage(Buffer.from('{not json'), [7]), {
    message: { kind: 'unrecognized', reason: 'not JSON' },
    unusedFds: [7],
  });
});

test("listen socket addresses are spelled as Envoy's tcp:// addresses", () => {
  assert.equal(tcpListenAddress('127.0.0.1', 10000), 'tcp://127.0.0.1:10000');
  assert.equal(tcpListenAddress('::1', 80), 'tcp://[::1]:80');
  assert.equal(tcpListenAddress('0.0.0.0', 0), 'tcp://0.0.0.0:0');
});
