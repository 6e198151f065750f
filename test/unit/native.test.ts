// The native addon from JavaScript, across two real processes where sharing is the point:
// shared memory, descriptor passing, socket names and locks. The other process is
// test/helpers/native_peer.ts.

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
import { NativeError } from '../../src/native/addon';
import { PEER_SHM_VALUE, ShmSlot, type PeerReport } from '../helpers/native_peer';

const PEER_SCRIPT = path.join(__dirname, '..', 'helpers', 'native_peer.js');
const BOUNDED = { timeout: 20_000 };

// open(2) flags as /proc/<pid>/fdinfo shows them (octal, Linux x86_64).
const O_NONBLOCK = 0o4000;
const O_CLOEXEC = 0o2000000;

/** A name no other test run on this machine uses. */
function unique(what: string): string {
  return `proxy_native_test_${process.pid}_${what}`;
}

class Peer {
  readonly child: ChildProcess;
  private readonly lines: AsyncIterator<string>;

  constructor(args: string[]) {
    this.child = spawn(process.execPath, [PEER_SCRIPT, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.lines = readline.createInterface({ input: this.child.stdout! })[Symbol.asyncIterator]();
  }

  get pid(): number {
    return this.child.pid!;
  }

  async next(): Promise<PeerReport> {
    const line = await this.lines.next();
    if (line.done) throw new Error(`peer ended without reporting (exit ${this.child.exitCode}, ${this.child.signalCode})`);
    return JSON.parse(line.value) as PeerReport;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGKILL');
    await exited;
  }
}

function startPeer(t: TestContext, ...args: string[]): Peer {
  const peer = new Peer(args);
  t.after(() => peer.stop());
  return peer;
}

function temporaryDirectory(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-native-test-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function bindDatagram(t: TestContext, name: string): number {
  const fd = addon.unixDgramBind(name);
  t.after(() => addon.closeFd(fd));
  return fd;
}

function fdFlags(fd: number): number {
  const flags = /^flags:\s+([0-7]+)$/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
  assert.ok(flags, `no flags in /proc/self/fdinfo/${fd}`);
  return parseInt(flags[1], 8);
}

/** Everything a server sends on one connection before closing it. */
async function readAll(port: number, host: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of net.connect(port, host)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

async function adopt(t: TestContext, fd: number, greeting: string): Promise<net.Server> {
  const server = net.createServer((connection) => connection.end(greeting));
  t.after(() => server.close());
  server.listen({ fd });
  await once(server, 'listening');
  return server;
}

/** The descriptor under a net.Socket, as node keeps it. */
function socketFd(socket: net.Socket): number {
  return (socket as unknown as { _handle: { fd: number } })._handle.fd;
}

function isNativeError(code: string, syscall: string, message?: string): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof NativeError, `expected a NativeError, got ${String(error)}`);
    assert.equal(error.code, code);
    assert.equal(error.errno, os.constants.errno[code as keyof typeof os.constants.errno]);
    assert.equal(error.syscall, syscall);
    if (message !== undefined) assert.equal(error.message, message);
    return true;
  };
}

test('shared memory written by one process is read by the other while both run', BOUNDED, async (t) => {
  const name = `/${unique('shm')}`;
  const buffer = addon.shmCreate(name, 4096);
  t.after(() => addon.shmUnlink(name));
  assert.equal(buffer.byteLength, 4096);
  const slots = new Float64Array(buffer);
  slots[ShmSlot.PARENT] = 7.25;

  const peer = startPeer(t, 'write-shm', name);
  assert.deepEqual(await peer.next(), { step: 'shm-written', seen: 7.25, pid: peer.pid });
  assert.equal(slots[ShmSlot.PEER], PEER_SHM_VALUE);
  assert.equal(slots[ShmSlot.PEER_PID], peer.pid);
});

test('shmOpen maps an existing region whole; shmCreate will not replace it', BOUNDED, (t) => {
  const name = `/${unique('shm_open')}`;
  const created = new Uint8Array(addon.shmCreate(name, 8192));
  t.after(() => addon.shmUnlink(name));

  const opened = new Uint8Array(addon.shmOpen(name));
  assert.equal(opened.byteLength, 8192);
  created[8191] = 0xa5;
  assert.equal(opened[8191], 0xa5);

  assert.throws(
    () => addon.shmCreate(name, 8192),
    isNativeError('EEXIST', 'shm_open', `shm_open(${name}): File exists (EEXIST)`),
  );
});

test('a missing region is ENOENT for shmOpen and shmUnlink', BOUNDED, () => {
  const name = `/${unique('shm_missing')}`;
  assert.throws(() => addon.shmOpen(name), isNativeError('ENOENT', 'shm_open'));
  assert.throws(
    () => addon.shmUnlink(name),
    isNativeError('ENOENT', 'shm_unlink', `shm_unlink(${name}): No such file or directory (ENOENT)`),
  );
});

test('a listen socket sent over a datagram socket is served by the process that got it', BOUNDED, async (t) => {
  const listener = addon.listenTcp('127.0.0.1', 0, 16);
  const peerName = `@${unique('listener_inbox')}`;
  const peer = startPeer(t, 'serve-sent-listener', peerName);
  assert.deepEqual(await peer.next(), { step: 'bound' });

  const sender = bindDatagram(t, `@${unique('listener_sender')}`);
  addon.unixDgramSend(sender, peerName, Buffer.from('listener'), [listener.fd]);
  // From here the peer's duplicate is the only descriptor of the socket.
  addon.closeFd(listener.fd);

  assert.deepEqual(await peer.next(), { step: 'listening', pid: peer.pid });
  assert.equal(await readAll(listener.port, '127.0.0.1'), `served by ${peer.pid}`);
});

test('a datagram reaches a filesystem path; a socket file left behind is replaced', BOUNDED, async (t) => {
  const dir = temporaryDirectory(t);
  const inbox = path.join(dir, 'inbox.sock');
  const first = addon.unixDgramBind(inbox);
  addon.closeFd(first);
  assert.ok(fs.statSync(inbox).isSocket(), 'closing a socket leaves its file');

  const fd = bindDatagram(t, inbox);
  const peer = startPeer(t, 'send', path.join(dir, 'peer.sock'), inbox, 'over the filesystem');
  assert.deepEqual(await peer.next(), { step: 'sent' });
  const datagram = addon.unixDgramRecv(fd, 4096, 0);
  assert.ok(datagram);
  assert.equal(datagram.data.toString(), 'over the filesystem');
  assert.deepEqual(datagram.fds, []);
});

test('an abstract name bound by another process is EADDRINUSE until that process exits', BOUNDED, async (t) => {
  const name = `@${unique('taken')}`;
  const peer = startPeer(t, 'hold-bound', name);
  assert.deepEqual(await peer.next(), { step: 'bound' });
  assert.throws(
    () => addon.unixDgramBind(name),
    isNativeError('EADDRINUSE', 'bind', `bind(${name}): Address already in use (EADDRINUSE)`),
  );

  await peer.stop();
  // An abstract name has no file: it is free as soon as its socket is gone.
  bindDatagram(t, name);
});

test('datagram sockets are non-blocking and close-on-exec, and so are the descriptors they bring', BOUNDED, (t) => {
  const name = `@${unique('flags')}`;
  const fd = bindDatagram(t, name);
  assert.equal(fdFlags(fd) & (O_NONBLOCK | O_CLOEXEC), O_NONBLOCK | O_CLOEXEC);

  const listener = addon.listenTcp('127.0.0.1', 0, 1);
  t.after(() => addon.closeFd(listener.fd));
  const other = bindDatagram(t, `@${unique('flags_other')}`);
  addon.unixDgramSend(fd, name, Buffer.from('two'), [listener.fd, other]);

  const datagram = addon.unixDgramRecv(fd, 16, 0);
  assert.ok(datagram);
  t.after(() => datagram.fds.forEach((received) => addon.closeFd(received)));
  assert.equal(datagram.data.toString(), 'two');
  assert.equal(datagram.fds.length, 2);
  for (const received of datagram.fds) {
    assert.ok(![listener.fd, other].includes(received), 'a received descriptor is a new one');
    assert.equal(fdFlags(received) & O_CLOEXEC, O_CLOEXEC);
  }
});

test('unixDgramRecv gives null when nothing came and refuses a datagram longer than maxBytes', BOUNDED, (t) => {
  const name = `@${unique('recv')}`;
  const fd = bindDatagram(t, name);
  assert.equal(addon.unixDgramRecv(fd, 16, 0), null);
  assert.equal(addon.unixDgramRecv(fd, 16, 20), null);

  addon.unixDgramSend(fd, name, Buffer.alloc(32, 'x'), []);
  assert.throws(() => addon.unixDgramRecv(fd, 16, 0), isNativeError('EMSGSIZE', 'recvmsg'));
  assert.equal(addon.unixDgramRecv(fd, 16, 0), null, 'the oversized datagram is consumed, not left queued');

  addon.unixDgramSend(fd, name, Buffer.alloc(0), []);
  assert.deepEqual(addon.unixDgramRecv(fd, 16, 0), { data: Buffer.alloc(0), fds: [] });
});

test('an unbound datagram socket sends to a filesystem path and an abstract name alike', BOUNDED, (t) => {
  const sender = addon.unixDgramSocket();
  t.after(() => addon.closeFd(sender));
  assert.equal(fdFlags(sender) & (O_NONBLOCK | O_CLOEXEC), O_NONBLOCK | O_CLOEXEC);
  const abstractName = `@${unique('unbound_inbox')}`;
  const fileName = path.join(temporaryDirectory(t), 'inbox.sock');
  for (const name of [abstractName, fileName]) {
    const inbox = bindDatagram(t, name);
    addon.unixDgramSend(sender, name, Buffer.from(`to ${name}`), []);
    assert.deepEqual(addon.unixDgramRecv(inbox, 64, 0), { data: Buffer.from(`to ${name}`), fds: [] });
  }
});

test('sending to an abstract name nobody bound is ECONNREFUSED', BOUNDED, (t) => {
  const fd = bindDatagram(t, `@${unique('lonely')}`);
  const nobody = `@${unique('nobody')}`;
  assert.throws(
    () => addon.unixDgramSend(fd, nobody, Buffer.from('hello?'), []),
    isNativeError('ECONNREFUSED', 'sendmsg', `sendmsg(${nobody}): Connection refused (ECONNREFUSED)`),
  );
});

test('listenTcp binds an ephemeral port, close-on-exec, that node adopts', BOUNDED, async (t) => {
  for (const host of ['127.0.0.1', '::1']) {
    const listener = addon.listenTcp(host, 0, 16);
    assert.ok(listener.port > 0);
    assert.equal(fdFlags(listener.fd) & O_CLOEXEC, O_CLOEXEC);
    const server = await adopt(t, listener.fd, `adopted on ${host}`);
    assert.equal((server.address() as net.AddressInfo).port, listener.port);
    assert.equal(await readAll(listener.port, host), `adopted on ${host}`);
  }
});

test('listenTcp on IPv6 is IPv6-only, and a port in use is EADDRINUSE', BOUNDED, (t) => {
  const v6 = addon.listenTcp('::', 0, 1);
  t.after(() => addon.closeFd(v6.fd));
  // Without IPV6_V6ONLY the IPv6 wildcard would hold the IPv4 port as well.
  const v4 = addon.listenTcp('0.0.0.0', v6.port, 1);
  t.after(() => addon.closeFd(v4.fd));
  assert.equal(v4.port, v6.port);

  assert.throws(
    () => addon.listenTcp('127.0.0.1', v4.port, 1),
    isNativeError('EADDRINUSE', 'bind', `bind(127.0.0.1:${v4.port}): Address already in use (EADDRINUSE)`),
  );
});

test('listenTcp with reusePort: sockets that all ask for it share an address, and one without is refused', BOUNDED, async (t) => {
  const first = addon.listenTcp('127.0.0.1', 0, 16, true);
  const second = addon.listenTcp('127.0.0.1', first.port, 16, true);
  assert.equal(second.port, first.port);
  // The servers own the descriptors from here on, and close them.
  await adopt(t, first.fd, 'first');
  await adopt(t, second.fd, 'second');
  assert.throws(() => addon.listenTcp('127.0.0.1', first.port, 1), isNativeError('EADDRINUSE', 'bind'));

  // The kernel spreads connections over both by a hash of their addresses: 32 all on one is 2 in 2^32.
  const answers = new Set<string>();
  for (let i = 0; i < 32 && answers.size < 2; i++) answers.add(await readAll(first.port, '127.0.0.1'));
  assert.deepEqual([...answers].sort(), ['first', 'second']);
});

test('a lock held by another process is EAGAIN until that process exits; an absent file is not made', BOUNDED, async (t) => {
  const lockPath = path.join(temporaryDirectory(t), 'proxy.lock');
  assert.throws(() => addon.lockFile(lockPath, false), isNativeError('ENOENT', 'open'));
  assert.ok(!fs.existsSync(lockPath));
  fs.writeFileSync(lockPath, '');
  const peer = startPeer(t, 'hold-lock', lockPath);
  assert.deepEqual(await peer.next(), { step: 'locked' });
  assert.throws(
    () => addon.lockFile(lockPath, false),
    isNativeError('EAGAIN', 'flock', `flock(${lockPath}): Resource temporarily unavailable (EAGAIN)`),
  );

  await peer.stop();
  const fd = addon.lockFile(lockPath, false);
  assert.equal(fdFlags(fd) & O_CLOEXEC, O_CLOEXEC);
  addon.unlockFile(fd);
  assert.throws(() => addon.closeFd(fd), isNativeError('EBADF', 'close'), 'unlockFile closed the descriptor');
  addon.unlockFile(addon.lockFile(lockPath, true));
});

test('getOriginalDst is null for a connection no NAT rule redirected', BOUNDED, async (t) => {
  for (const host of ['127.0.0.1', '::1']) {
    const server = net.createServer();
    t.after(() => server.close());
    server.listen(0, host);
    await once(server, 'listening');
    const client = net.connect((server.address() as net.AddressInfo).port, host);
    t.after(() => client.destroy());
    const [accepted] = (await once(server, 'connection')) as [net.Socket];
    t.after(() => accepted.destroy());
    assert.equal(addon.getOriginalDst(socketFd(accepted)), null);
  }
  assert.equal(addon.getOriginalDst(bindDatagram(t, `@${unique('not_ip')}`)), null, 'not an IP socket');
  assert.throws(() => addon.getOriginalDst(2 ** 30), isNativeError('EBADF', 'getsockname'));
});

test('closeFd closes once; a second close is EBADF', BOUNDED, () => {
  const { fd } = addon.listenTcp('127.0.0.1', 0, 1);
  addon.closeFd(fd);
  assert.throws(() => addon.closeFd(fd), isNativeError('EBADF', 'close', `close(fd ${fd}): Bad file descriptor (EBADF)`));
});

test('socketSend: a failed send is its negative errno, not an exception', BOUNDED, (t) => {
  const fd = addon.unixDgramSocket();
  t.after(() => addon.closeFd(fd));
  const ENOTCONN = 107;
  assert.equal(addon.socketSend(fd, 'to nowhere'), -ENOTCONN);
  assert.equal(addon.socketSend(fd, ''), 0, 'nothing to send is no call');
});

test('bad arguments throw TypeError or RangeError instead of crashing the process', BOUNDED, (t) => {
  const fd = bindDatagram(t, `@${unique('arguments')}`);
  const untyped = addon as unknown as Record<string, (...args: unknown[]) => unknown>;
  // A relay's ten statistics cells (one element each), its state, and its callback.
  const cells = Array.from({ length: 10 }, () => new Float64Array(1));
  const indexes = cells.map(() => 0);
  const state = new Float64Array(3);
  const noop = (): void => undefined;
  const cases: [string, unknown[], typeof TypeError | typeof RangeError, string][] = [
    ['shmCreate', [1, 4096], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['shmCreate', ['/proxy_native_test', 0], RangeError, 'ERR_OUT_OF_RANGE'],
    ['shmCreate', ['/proxy_native_test', 1.5], RangeError, 'ERR_OUT_OF_RANGE'],
    ['shmCreate', ['/proxy_native_test', '4096'], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['shmOpen', ['/proxy\0native'], TypeError, 'ERR_INVALID_ARG_VALUE'],
    ['shmUnlink', [], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['listenTcp', ['localhost', 0, 1], TypeError, 'ERR_INVALID_ARG_VALUE'],
    ['listenTcp', ['127.0.0.1', 65536, 1], RangeError, 'ERR_OUT_OF_RANGE'],
    ['listenTcp', ['127.0.0.1', 0, -1], RangeError, 'ERR_OUT_OF_RANGE'],
    ['closeFd', [-1], RangeError, 'ERR_OUT_OF_RANGE'],
    ['closeFd', ['3'], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['closeFd', [NaN], RangeError, 'ERR_OUT_OF_RANGE'],
    ['unixDgramBind', [''], TypeError, 'ERR_INVALID_ARG_VALUE'],
    ['unixDgramBind', ['@'], TypeError, 'ERR_INVALID_ARG_VALUE'],
    ['unixDgramBind', [`@${'x'.repeat(108)}`], RangeError, 'ERR_OUT_OF_RANGE'],
    ['unixDgramBind', [`/tmp/${'x'.repeat(103)}`], RangeError, 'ERR_OUT_OF_RANGE'],
    ['unixDgramSend', [fd, '@x', 'text', []], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['unixDgramSend', [fd, '@x', Buffer.from('x'), 3], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['unixDgramSend', [fd, '@x', Buffer.from('x'), [1.5]], RangeError, 'ERR_OUT_OF_RANGE'],
    ['unixDgramSend', [fd, '@x', Buffer.from('x'), ['1']], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['unixDgramSend', [fd, '@x', Buffer.from('x'), new Array(254).fill(fd)], RangeError, 'ERR_OUT_OF_RANGE'],
    ['unixDgramRecv', [fd, -1, 0], RangeError, 'ERR_OUT_OF_RANGE'],
    ['unixDgramRecv', [fd, 16, null], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['lockFile', ['/tmp/proxy_native_test.lock', 'yes'], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['unlockFile', [{}], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['getOriginalDst', [undefined], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['relayStart', [[fd], [0, 0], cells, indexes, state, noop], RangeError, 'ERR_OUT_OF_RANGE'],
    ['relayStart', [[fd, fd], [0, -1], cells, indexes, state, noop], RangeError, 'ERR_OUT_OF_RANGE'],
    ['relayStart', [[fd, fd], [0, 0], cells.slice(1), indexes, state, noop], RangeError, 'ERR_OUT_OF_RANGE'],
    ['relayStart', [[fd, fd], [0, 0], [new Float32Array(1), ...cells.slice(1)], indexes, state, noop], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['relayStart', [[fd, fd], [0, 0], cells, [1, ...indexes.slice(1)], state, noop], RangeError, 'ERR_OUT_OF_RANGE'],
    ['relayStart', [[fd, fd], [0, 0], cells, indexes, new Float64Array(2), noop], RangeError, 'ERR_OUT_OF_RANGE'],
    ['relayStart', [[fd, fd], [0, 0], cells, indexes, state, 'noop'], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['relayClose', [{}], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['socketSend', ['3', 'x'], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['socketSend', [fd, 5], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['socketSend', [fd, 'x', 'y'], TypeError, 'ERR_INVALID_ARG_TYPE'],
  ];
  for (const [name, args, errorClass, code] of cases) {
    assert.throws(
      () => untyped[name](...args),
      (error: unknown) => {
        assert.ok(error instanceof errorClass && !(error instanceof NativeError), `${name}: got ${String(error)}`);
        assert.equal((error as NodeJS.ErrnoException).code, code, `${name}(${String(args)}): ${error.message}`);
        return true;
      },
    );
  }
  assert.throws(() => untyped.listenTcp('127.0.0.1', 70000, 1), {
    name: 'RangeError',
    message: 'The value of "port" is out of range. It must be >= 0 && <= 65535. Received 70000',
  });
});
