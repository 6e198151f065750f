// The other process of test/unit/native.test.ts: runs one addon scenario from its command line
// and reports each step as a JSON line on stdout. It exits when its stdin closes, so that a
// crashed test run never leaves it behind.

import * as net from 'node:net';
import * as addon from '../../src/native/addon';

export type PeerReport =
  | { readonly step: 'shm-written'; readonly seen: number; readonly pid: number }
  | { readonly step: 'bound' }
  | { readonly step: 'listening'; readonly pid: number }
  | { readonly step: 'sent' }
  | { readonly step: 'locked' };

/** Float64 slots of the shared memory scenario: the parent writes PARENT, the peer the others. */
export const ShmSlot = { PARENT: 0, PEER: 1, PEER_PID: 2 } as const;
export const PEER_SHM_VALUE = 42.5;

const POLL_INTERVAL_MS = 10;

function report(message: PeerReport): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** Opens the region the parent created, reports the parent's value, writes its own. */
function writeShm(name: string): void {
  const slots = new Float64Array(addon.shmOpen(name));
  slots[ShmSlot.PEER] = PEER_SHM_VALUE;
  slots[ShmSlot.PEER_PID] = process.pid;
  report({ step: 'shm-written', seen: slots[ShmSlot.PARENT], pid: process.pid });
}

/** Binds `path` and waits for a listen socket sent over it, then serves it: each connection
 * is answered with this process's pid. */
function serveSentListener(path: string): void {
  const socket = addon.unixDgramBind(path);
  report({ step: 'bound' });
  const poll = setInterval(() => {
    const datagram = addon.unixDgramRecv(socket, 64, 0);
    if (datagram === null) return;
    clearInterval(poll);
    addon.closeFd(socket);
    const server = net.createServer((connection) => connection.end(`served by ${process.pid}`));
    server.listen({ fd: datagram.fds[0] }, () => report({ step: 'listening', pid: process.pid }));
  }, POLL_INTERVAL_MS);
}

/** Holds `path` bound (to show the name is taken) until the parent ends this process. */
function holdBound(path: string): void {
  addon.unixDgramBind(path);
  report({ step: 'bound' });
}

/** Sends `text` to `destination` from a socket bound at `ownPath`. */
function send(ownPath: string, destination: string, text: string): void {
  const socket = addon.unixDgramBind(ownPath);
  addon.unixDgramSend(socket, destination, Buffer.from(text), []);
  addon.closeFd(socket);
  report({ step: 'sent' });
}

function holdLock(path: string): void {
  addon.lockFile(path, true);
  report({ step: 'locked' });
}

const scenarios: Record<string, (...args: string[]) => void> = {
  'write-shm': writeShm,
  'serve-sent-listener': serveSentListener,
  'hold-bound': holdBound,
  send,
  'hold-lock': holdLock,
};

function main(): void {
  const [scenario, ...args] = process.argv.slice(2);
  const run = scenarios[scenario ?? ''];
  if (run === undefined) throw new Error(`unknown scenario ${scenario}; one of ${Object.keys(scenarios).join(', ')}`);
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
  run(...args);
}

// The test imports this file's constants and types; only a spawned peer runs a scenario.
if (require.main === module) main();
