// SIGUSR1 sent straight to a worker (as `systemctl kill -s USR1` or logrotate's `pkill -USR1` do)
// reopens its log and nothing else: Node's default, opening its inspector on 127.0.0.1:9229,
// would give any local user a debugger running as the proxy's user.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { test } from 'node:test';
import { servingBootstrap } from '../helpers/config_fixtures';
import { request, startProxy, waitFor } from '../helpers/proxy_process';

const LISTEN_STATE = '0A';

/** Inodes of every TCP socket in the LISTEN state, from /proc/net/tcp and tcp6. */
function listeningInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === LISTEN_STATE) inodes.add(fields[9]);
    }
  }
  return inodes;
}

/** What `pid`'s descriptors point at: paths, and `socket:[inode]` for sockets. */
function openFiles(pid: number): string[] {
  return fs.readdirSync(`/proc/${pid}/fd`).map((fd) => {
    try {
      return fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      return '';
    }
  });
}

/** The listening sockets `pid` holds. */
function listenersOf(pid: number): string[] {
  const listening = listeningInodes();
  return openFiles(pid)
    .map((file) => /^socket:\[(\d+)\]$/.exec(file)?.[1])
    .filter((inode): inode is string => inode !== undefined && listening.has(inode))
    .sort();
}

test('SIGUSR1 to a worker reopens its log, opens no debugger, and the worker keeps serving', { timeout: 60_000 }, async (t) => {
  const upstream = http.createServer((req, res) => res.end(`upstream saw ${req.url}`));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t.after(() => upstream.close());
  const upstreamPort = (upstream.address() as net.AddressInfo).port;
  const logDir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'proxy-sigusr1-'));
  t.after(() => fs.rmSync(logDir, { recursive: true, force: true }));
  const logFile = path.join(logDir, 'proxy.log');

  const config = servingBootstrap({ upstreamPort, listenPort: 0, version: 'v1' });
  const proxy = await startProxy(config, ['--concurrency', '1', '--log-path', logFile]);
  t.after(() => proxy.cleanup());
  const port = await proxy.listenerPort('http_in');
  const [worker] = proxy.groupPids().filter((pid) => pid !== proxy.pid);
  assert.ok(worker, 'a worker process');
  assert.equal((await request(`http://127.0.0.1:${port}/before`)).body, 'upstream saw /before');
  const listenersBefore = listenersOf(worker);
  assert.ok(listenersBefore.length >= 1, 'the worker holds the listener socket');

  // Rotate the log, then signal the worker alone: the supervisor's log stays where it was.
  fs.renameSync(logFile, `${logFile}.1`);
  process.kill(worker, 'SIGUSR1');
  // The reopened log proves the signal was handled; without a handler Node opens its inspector.
  await waitFor('the worker to reopen its log', () => {
    const files = openFiles(worker);
    return files.includes(logFile) && !files.includes(`${logFile}.1`) ? true : undefined;
  });
  assert.deepEqual(listenersOf(worker), listenersBefore, 'no new listening socket in the worker');
  assert.equal((await request(`http://127.0.0.1:${port}/after`)).body, 'upstream saw /after');
  assert.deepEqual(listenersOf(worker), listenersBefore);
  assert.ok(!proxy.stderr.includes('Debugger listening'), proxy.stderr);
  assert.deepEqual(proxy.groupPids().sort(), [proxy.pid, worker].sort(), 'the same worker still runs');
});
