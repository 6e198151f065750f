// The hot restart domain-socket protocol between two real processes: this test is the child
// epoch, test/helpers/hot_restart_parent.ts the parent epoch. Also the socket names, modes and
// the errors an operator sees when ids collide or the parent is missing.

import { test, type TestContext } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';

import * as addon from '../../src/native/addon';
import { claimBaseId, writeBaseIdFile } from '../../src/hot_restart/base_id';
import { ChildEndpoint } from '../../src/hot_restart/child_endpoint';
import { domainSocketName, HotRestartSockets } from '../../src/hot_restart/domain_sockets';
import {
  DynamicBaseIdError,
  HotRestartPeerUnreachableError,
  HotRestartProtocolError,
  HotRestartSocketInUseError,
  HotRestartTimeoutError,
} from '../../src/hot_restart/errors';
import { frameMessage } from '../../src/hot_restart/framing';
import { ORIGINAL_START_TIME_UNIX_SECONDS, type ParentReport } from '../helpers/hot_restart_parent';

const PARENT_SCRIPT = path.join(__dirname, '..', 'helpers', 'hot_restart_parent.js');
const BOUNDED = { timeout: 20_000 };
const REPLY_TIMEOUT_MS = 5000;

/** An abstract socket path no other test run or proxy on this machine uses. */
function uniqueSocketPath(what: string): string {
  return `@proxy_hot_restart_test_${process.pid}_${what}`;
}

class ParentProcess {
  readonly child: ChildProcess;
  private readonly lines: AsyncIterator<string>;

  constructor(args: string[]) {
    this.child = spawn(process.execPath, [PARENT_SCRIPT, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.lines = readline.createInterface({ input: this.child.stdout! })[Symbol.asyncIterator]();
  }

  async next(): Promise<ParentReport> {
    const line = await this.lines.next();
    if (line.done) throw new Error(`the parent ended without reporting (exit ${this.child.exitCode}, ${this.child.signalCode})`);
    return JSON.parse(line.value) as ParentReport;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGKILL');
    await exited;
  }
}

async function startParent(t: TestContext, socketPath: string, epoch: number, pollMs?: number) {
  const parent = new ParentProcess([socketPath, '600', '0', String(epoch), ...(pollMs === undefined ? [] : [String(pollMs)])]);
  t.after(() => parent.stop());
  const ready = await parent.next();
  assert.equal(ready.step, 'ready');
  return { parent, ready: ready as Extract<ParentReport, { step: 'ready' }> };
}

function bindSockets(t: TestContext, options: { socketPath: string; restartEpoch: number; baseId?: number; socketMode?: number }) {
  const sockets = HotRestartSockets.bind({ socketMode: 0o600, baseId: 0, ...options });
  t.after(() => sockets.close());
  return sockets;
}

/** Everything a server sends on one connection before closing it. */
async function readAll(port: number): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of net.connect(port, '127.0.0.1')) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

function sendRaw(fromFd: number, destination: string, payload: string | Buffer): void {
  for (const chunk of frameMessage(Buffer.from(payload))) addon.unixDgramSend(fromFd, destination, chunk, []);
}

test('a child epoch shuts the parent admin down, takes its listen socket, drains and terminates it', BOUNDED, async (t) => {
  const socketPath = uniqueSocketPath('sequence');
  const { parent, ready } = await startParent(t, socketPath, 3);
  const sockets = bindSockets(t, { socketPath, restartEpoch: 4 });
  const child = new ChildEndpoint(sockets.child, REPLY_TIMEOUT_MS);
  assert.equal(child.hasParent, true);

  assert.deepEqual(await child.shutdownParentAdmin(), { originalStartTimeUnixSeconds: ORIGINAL_START_TIME_UNIX_SECONDS });
  assert.deepEqual(await parent.next(), { step: 'shutdown_admin' });

  const fd = await child.duplicateParentListenSocket(ready.listenAddress, null);
  assert.deepEqual(await parent.next(), { step: 'pass_listen_socket', address: ready.listenAddress, passed: true });
  assert.ok(fd !== null);
  const server = net.createServer((connection) => connection.end(`accepted by ${process.pid}`));
  t.after(() => server.close());
  server.listen({ fd });
  await once(server, 'listening');
  // The parent never accepts: the answer proves the child accepts on the very socket it was passed.
  assert.equal(await readAll(ready.port), `accepted by ${process.pid}`);

  assert.equal(await child.duplicateParentListenSocket('tcp://[::1]:1', null), null);
  assert.deepEqual(await parent.next(), { step: 'pass_listen_socket', address: 'tcp://[::1]:1', passed: false });

  child.drainParentListeners();
  assert.deepEqual(await parent.next(), { step: 'drain_listeners' });

  const exited = once(parent.child, 'exit');
  child.terminateParent();
  assert.deepEqual(await parent.next(), { step: 'log', level: 'info', message: 'shutting down due to child request' });
  assert.deepEqual(await parent.next(), { step: 'terminate' });
  assert.deepEqual(await exited, [0, null]);

  assert.equal(child.hasParent, false);
  assert.equal(await child.shutdownParentAdmin(), null, 'after terminate there is no parent to ask');
});

test('the parent answers what it does not recognize with didnt_recognize_your_last_message', BOUNDED, async (t) => {
  const socketPath = uniqueSocketPath('unrecognized');
  const { parent } = await startParent(t, socketPath, 0);
  const sockets = bindSockets(t, { socketPath, restartEpoch: 1 });
  const parentName = domainSocketName(socketPath, 'parent', 0, 0);
  const unrecognized = [
    ['a request it does not know', JSON.stringify({ version: 1, request: { stats: {} } }), /unknown request "stats"/],
    ['another protocol version', JSON.stringify({ version: 2, request: { shutdown_admin: {} } }), /protocol version 2/],
    ['a reply', JSON.stringify({ version: 1, reply: { shutdown_admin: { original_start_time_unix_seconds: 1 } } }), /shutdown_admin reply/],
  ] as const;
  for (const [what, payload, logged] of unrecognized) {
    sendRaw(sockets.child.fd, parentName, payload);
    assert.deepEqual(sockets.child.receive(REPLY_TIMEOUT_MS), { kind: 'didnt_recognize_your_last_message' }, what);
    const log = await parent.next();
    assert.equal(log.step, 'log');
    assert.match((log as { message: string }).message, logged);
  }

  // Garbage framing too: a datagram shorter than the length prefix.
  addon.unixDgramSend(sockets.child.fd, parentName, Buffer.from('hello'), []);
  assert.deepEqual(sockets.child.receive(REPLY_TIMEOUT_MS), { kind: 'didnt_recognize_your_last_message' });
  assert.match(((await parent.next()) as { message: string }).message, /shorter than its length prefix/);

  // A child whose request meets didnt_recognize reports the mismatch. Bouncing one off the parent
  // queues a didnt_recognize on the child socket, ahead of the answer to the request below.
  sendRaw(sockets.child.fd, parentName, JSON.stringify({ version: 1, didnt_recognize_your_last_message: true }));
  await parent.next();
  const child = new ChildEndpoint(sockets.child, REPLY_TIMEOUT_MS);
  await assert.rejects(child.shutdownParentAdmin(), (error: unknown) => {
    assert.ok(error instanceof HotRestartProtocolError);
    assert.match(error.message, /answered a shutdown_admin request with didnt_recognize_your_last_message/);
    return true;
  });
});

test("after a request the parent answers the child's next ones at once, not at its idle poll", BOUNDED, async (t) => {
  const socketPath = uniqueSocketPath('burst');
  // An idle poll long enough to tell apart: each request would otherwise wait most of it. Half
  // of it is the bound, far above what a loaded machine's scheduling adds to an answer at once.
  const idlePollMs = 2000;
  const { parent, ready } = await startParent(t, socketPath, 0, idlePollMs);
  const child = new ChildEndpoint(bindSockets(t, { socketPath, restartEpoch: 1 }).child, REPLY_TIMEOUT_MS);
  await child.shutdownParentAdmin();
  assert.deepEqual(await parent.next(), { step: 'shutdown_admin' });
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    const fd = await child.duplicateParentListenSocket(ready.listenAddress, null);
    const waited = performance.now() - started;
    assert.ok(fd !== null);
    addon.closeFd(fd);
    assert.ok(waited < idlePollMs / 2, `request ${i} waited ${waited.toFixed(0)} ms`);
    assert.deepEqual(await parent.next(), { step: 'pass_listen_socket', address: ready.listenAddress, passed: true });
  }
});

test('a request longer than one datagram is reassembled by the parent', BOUNDED, async (t) => {
  const socketPath = uniqueSocketPath('long');
  const { parent } = await startParent(t, socketPath, 0);
  const sockets = bindSockets(t, { socketPath, restartEpoch: 1 });
  const address = `tcp://${'a'.repeat(10_000)}:80`;
  assert.equal(await new ChildEndpoint(sockets.child, REPLY_TIMEOUT_MS).duplicateParentListenSocket(address, null), null);
  assert.deepEqual(await parent.next(), { step: 'pass_listen_socket', address, passed: false });
});

test('epoch 0 has no parent: requests are no-ops', BOUNDED, async (t) => {
  const sockets = bindSockets(t, { socketPath: uniqueSocketPath('epoch0'), restartEpoch: 0 });
  const child = new ChildEndpoint(sockets.child, REPLY_TIMEOUT_MS);
  assert.equal(child.hasParent, false);
  assert.equal(await child.shutdownParentAdmin(), null);
  assert.equal(await child.duplicateParentListenSocket('tcp://127.0.0.1:80', null), null);
  child.drainParentListeners();
  child.terminateParent();
});

test('a missing parent is a typed error naming the socket it looked for', BOUNDED, async (t) => {
  const socketPath = uniqueSocketPath('orphan');
  const sockets = bindSockets(t, { socketPath, restartEpoch: 2 });
  await assert.rejects(new ChildEndpoint(sockets.child, REPLY_TIMEOUT_MS).shutdownParentAdmin(), (error: unknown) => {
    assert.ok(error instanceof HotRestartPeerUnreachableError);
    assert.equal(
      error.message,
      `the parent process (epoch 1) is not bound to ${socketPath}_parent_1 (ECONNREFUSED): ` +
        'is it running, with the same --base-id and --socket-path?',
    );
    return true;
  });

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-hot-restart-test-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const onDisk = bindSockets(t, { socketPath: path.join(dir, 'domain_socket'), restartEpoch: 1 });
  await assert.rejects(new ChildEndpoint(onDisk.child, REPLY_TIMEOUT_MS).shutdownParentAdmin(), /\(ENOENT\)/);
});

test('a parent that never answers is a timeout error', BOUNDED, async (t) => {
  const socketPath = uniqueSocketPath('silent');
  bindSockets(t, { socketPath, restartEpoch: 0 });
  const sockets = bindSockets(t, { socketPath, restartEpoch: 1 });
  await assert.rejects(new ChildEndpoint(sockets.child, 200).shutdownParentAdmin(), (error: unknown) => {
    assert.ok(error instanceof HotRestartTimeoutError);
    assert.match(error.message, /did not answer a shutdown_admin request within 200 ms/);
    return true;
  });
});

test("a second epoch 0 on the same base id is refused with Envoy's message", BOUNDED, (t) => {
  const socketPath = uniqueSocketPath('in_use');
  bindSockets(t, { socketPath, restartEpoch: 0, baseId: 3 });
  assert.throws(
    () => HotRestartSockets.bind({ socketPath, socketMode: 0o600, baseId: 3, restartEpoch: 0 }),
    (error: unknown) => {
      assert.ok(error instanceof HotRestartSocketInUseError);
      assert.equal(error.message, 'unable to bind domain socket with base_id=30, id=0, errno=98 (see --base-id option)');
      return true;
    },
  );
  // Epoch 3 shares epoch 0's names: only three epochs live at once.
  assert.throws(() => HotRestartSockets.bind({ socketPath, socketMode: 0o600, baseId: 3, restartEpoch: 3 }), /id=3, errno=98/);
  // The other base ids, and the next epochs, are free.
  bindSockets(t, { socketPath, restartEpoch: 0, baseId: 4 });
  bindSockets(t, { socketPath, restartEpoch: 1, baseId: 3 });
});

test('a dynamic base id skips ids in use and is written to --base-id-path', BOUNDED, (t) => {
  const socketPath = uniqueSocketPath('dynamic');
  bindSockets(t, { socketPath, restartEpoch: 0, baseId: 7 });
  const draws = [0xf000_0007, 8];
  const bind = (baseId: number) => bindSockets(t, { socketPath, restartEpoch: 0, baseId });
  const { baseId, bound } = claimBaseId({ baseId: 0, useDynamicBaseId: true }, bind, () => draws.shift()!);
  assert.equal(baseId, 8, 'the high bits are masked off, so the first draw is the taken id 7');
  assert.equal(bound.parent.name, `${socketPath}_parent_80`);

  assert.throws(() => claimBaseId({ baseId: 0, useDynamicBaseId: true }, bind, () => 7), DynamicBaseIdError);
  assert.throws(() => claimBaseId({ baseId: 0, useDynamicBaseId: true }, bind, () => 7), /^DynamicBaseIdError: unable to select a dynamic base id$/);
  assert.equal(claimBaseId({ baseId: 5, useDynamicBaseId: false }, bind).baseId, 5);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-hot-restart-test-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'base_id');
  writeBaseIdFile(file, baseId);
  assert.equal(fs.readFileSync(file, 'utf8'), '8');
  assert.throws(() => writeBaseIdFile(path.join(dir, 'missing', 'base_id'), 8), /cannot open base id output file .* for writing\./);
});

test('filesystem sockets take --socket-mode', BOUNDED, (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-hot-restart-test-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const socketPath = path.join(dir, 'proxy_domain_socket');
  const mode = (file: string) => fs.statSync(file).mode & 0o777;

  bindSockets(t, { socketPath, restartEpoch: 0, socketMode: 0o644 });
  assert.equal(mode(`${socketPath}_parent_0`), 0o644);
  assert.equal(mode(`${socketPath}_child_0`), 0o644);

  bindSockets(t, { socketPath, restartEpoch: 1 });
  assert.equal(mode(`${socketPath}_parent_1`), 0o600);
});
