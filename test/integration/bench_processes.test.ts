import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { freePort } from '../../bench/free_port';
import { ServiceStartError, waitUntilServing } from '../../bench/http_probe';
import { readProcessTree, readTreeCpuTicks } from '../../bench/proc_cpu';
import { ProcessGroups } from '../../bench/process_group';

/** Zombies count as gone: they run nothing and only wait for their parent to reap them. */
function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function poll<T>(read: () => T, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

test('stopping a process also ends everything it forked', { timeout: 20000 }, async () => {
  const processes = new ProcessGroups();
  try {
    const shell = processes.spawn('shell', 'sh', ['-c', 'sleep 30 & sleep 30 & wait']);
    const tree = await poll(() => readProcessTree(shell.pid), (found) => found.length === 3);
    await processes.stop(shell);
    const pids = tree.map((entry) => entry.pid);
    await poll(() => pids.filter(isRunning), (running) => running.length === 0);
    assert.deepEqual(await shell.exited, { code: null, signal: 'SIGTERM' });
  } finally {
    await processes.stopAll();
  }
});

test('the CPU of a tree includes children that already exited', { timeout: 20000 }, async () => {
  const processes = new ProcessGroups();
  try {
    // A child burns 300 ms of CPU and exits; the shell reaps it, then becomes sleep (exec keeps
    // the shell's account of its reaped children).
    const burn = 'const end = Date.now() + 300; while (Date.now() < end);';
    const shell = processes.spawn('shell', 'sh', ['-c', `"$0" -e "${burn}" && exec sleep 30`, process.execPath]);
    await poll(() => readFileSync(`/proc/${shell.pid}/comm`, 'utf8').trim(), (comm) => comm === 'sleep');
    assert.equal(readProcessTree(shell.pid).length, 1);
    assert.ok(readTreeCpuTicks(shell.pid) > 0);
  } finally {
    await processes.stopAll();
  }
});

test('a service that exits before serving fails at once with its output', { timeout: 20000 }, async () => {
  const processes = new ProcessGroups();
  try {
    const broken = processes.spawn('broken proxy', 'sh', ['-c', 'echo "bad config: no listeners" >&2; exit 3']);
    await assert.rejects(
      waitUntilServing(broken, { port: await freePort(), path: '/', expectedBody: 'Hello, World!' }, 15000),
      (error: Error) => error instanceof ServiceStartError && /^broken proxy exited with code 3 before serving\nbad config: no listeners$/.test(error.message),
    );
  } finally {
    await processes.stopAll();
  }
});

test('a service that never answers fails after the timeout instead of hanging', { timeout: 20000 }, async () => {
  const processes = new ProcessGroups();
  try {
    const silent = processes.spawn('silent proxy', 'sleep', ['30']);
    const port = await freePort();
    await assert.rejects(
      waitUntilServing(silent, { port, path: '/', expectedBody: 'Hello, World!' }, 500),
      new RegExp(`silent proxy did not answer GET / on 127\\.0\\.0\\.1:${port} with 200 within 0\\.5 s \\(last: .*ECONNREFUSED`),
    );
  } finally {
    await processes.stopAll();
  }
});

test('a service answering 503 is not ready; one answering the expected body is', { timeout: 20000 }, async () => {
  const processes = new ProcessGroups();
  let status = 503;
  const { server, port } = await listen((_req, res) => res.writeHead(status).end(status === 200 ? 'Hello, World!' : 'no healthy upstream'));
  try {
    const standIn = processes.spawn('proxy', 'sleep', ['30']);
    const target = { port, path: '/', expectedBody: 'Hello, World!' };
    await assert.rejects(waitUntilServing(standIn, target, 300), /last: status 503, 19-byte body/);
    status = 200;
    await waitUntilServing(standIn, target, 5000);
  } finally {
    server.close();
    await processes.stopAll();
  }
});
