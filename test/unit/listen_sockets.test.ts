// A listener's listen sockets over real ones: shared or one per worker, taken from the previous
// epoch by kind and index, port 0 bound once then shared by every reuse_port socket, and those
// made before a failure closed.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { test } from 'node:test';
import { bindListenSockets, type ListenSocketBinder, socketForNextEpoch, workerListenSocket } from '../../src/listener/listen_sockets';
import * as addon from '../../src/native/addon';

const isOpen = (fd: number) => fs.existsSync(`/proc/self/fd/${fd}`);

/** Binds for real; `previous` plays the previous epoch's sockets by worker index (-1: the shared one). */
function binder(previous = new Map<number, number>(), failAt = Infinity): ListenSocketBinder & { asked: (number | null)[] } {
  let binds = 0;
  const asked: (number | null)[] = [];
  return {
    asked,
    inherit: async (_address, _port, workerIndex) => {
      asked.push(workerIndex);
      return previous.get(workerIndex ?? -1) ?? null;
    },
    bind: async (address, port, reusePort) => {
      if (++binds >= failAt) throw new Error('no more sockets');
      return addon.listenTcp(address, port, 16, reusePort);
    },
    close: (fd) => addon.closeFd(fd),
  };
}

test('shared: one socket for every worker; reuse_port on port 0: one per worker, all on the port the first got', async (t) => {
  const shared = await bindListenSockets(binder(), '127.0.0.1', 0, false, 3);
  const spread = await bindListenSockets(binder(), '127.0.0.1', 0, true, 3);
  t.after(() => [...shared.fds, ...spread.fds].forEach((fd) => addon.closeFd(fd)));
  assert.equal(shared.fds.length, 1);
  assert.deepEqual([0, 1, 2].map((i) => workerListenSocket(shared, i)), [shared.fds[0], shared.fds[0], shared.fds[0]]);
  assert.equal(spread.fds.length, 3);
  assert.ok(spread.port > 0);
  assert.deepEqual([0, 1, 2].map((i) => workerListenSocket(spread, i)), spread.fds);
  // A fourth binds beside them: they all have SO_REUSEPORT.
  addon.closeFd(addon.listenTcp('127.0.0.1', spread.port, 1, true).fd);
});

test("the previous epoch's sockets are taken by kind and index; a port-0 listener never asks", async (t) => {
  const parentZero = addon.listenTcp('127.0.0.1', 0, 16, true);
  const port = parentZero.port;
  const ours = binder(new Map([[0, parentZero.fd]]));
  const sockets = await bindListenSockets(ours, '127.0.0.1', port, true, 2);
  t.after(() => sockets.fds.forEach((fd) => addon.closeFd(fd)));
  assert.deepEqual(ours.asked, [0, 1]);
  assert.equal(sockets.fds[0], parentZero.fd);
  assert.notEqual(sockets.fds[1], parentZero.fd);
  assert.equal(sockets.port, port);

  const fresh = binder();
  const zero = await bindListenSockets(fresh, '127.0.0.1', 0, false, 2);
  addon.closeFd(zero.fds[0]!);
  assert.deepEqual(fresh.asked, []);
});

test('what the next epoch is passed: the same kind of socket only', () => {
  const shared = { fds: [7], reusePort: false, port: 80 };
  const spread = { fds: [8, 9], reusePort: true, port: 80 };
  assert.equal(socketForNextEpoch(shared, null), 7);
  assert.equal(socketForNextEpoch(shared, 0), null);
  assert.equal(socketForNextEpoch(spread, null), null);
  assert.equal(socketForNextEpoch(spread, 1), 9);
  assert.equal(socketForNextEpoch(spread, 2), null);
});

test('a failed bind closes the sockets made before it', async () => {
  const made: number[] = [];
  const failing = binder(new Map(), 3);
  const bind = failing.bind;
  failing.bind = async (...args) => {
    const socket = await bind(...args);
    made.push(socket.fd);
    return socket;
  };
  await assert.rejects(bindListenSockets(failing, '127.0.0.1', 0, true, 4), /no more sockets/);
  assert.equal(made.length, 2);
  assert.ok(made.every((fd) => !isOpen(fd)));
});
