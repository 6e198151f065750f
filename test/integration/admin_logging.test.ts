import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LOGGING_USAGE } from '../../src/admin/logging_handler';
import { COMPONENT_NAMES } from '../../src/log/components';
import { makeTempDir, RunningProxy, sleep, startProxy, waitFor } from '../helpers/proxy_process';
import { routedBootstrap } from '../helpers/routed_bootstrap';

function listing(levels: (name: string) => string): string {
  return `active loggers:\n${COMPONENT_NAMES.map((name) => `  ${name}: ${levels(name)}\n`).join('')}\n`;
}

/** A request the HTTP codec refuses: the proxy answers 400 and closes, logging at debug why. */
function garbage(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end('NOT HTTP AT ALL\r\n\r\n'));
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer to a malformed request')));
    socket.on('error', reject);
    socket.on('data', () => undefined);
    socket.on('close', () => resolve());
  });
}

/** The pids (%t) of the debug lines the http logger wrote for refused requests, in order. */
function protocolErrorPids(logPath: string): number[] {
  const text = fs.existsSync(logPath) ? fs.readFileSync(logPath, 'utf8') : '';
  return [...text.matchAll(/^\[(\d+)\]\[debug\]\[http\] protocol error from /gm)].map((m) => Number(m[1]));
}

function workerPids(proxy: RunningProxy): number[] {
  return proxy.groupPids().filter((pid) => pid !== proxy.pid);
}

describe('POST /logging', { timeout: 60_000 }, () => {
  let proxy: RunningProxy;
  let logDir: string;
  let logPath: string;
  let port: number;

  before(async () => {
    logDir = makeTempDir();
    logPath = path.join(logDir, 'proxy.log');
    // Nothing listens on port 9: only refused requests are sent, which never reach it.
    proxy = await startProxy(routedBootstrap(9), ['--concurrency', '2', '--log-path', logPath, '--log-format', '[%t][%l][%n] %v']);
    port = await proxy.listenerPort('http_in');
  });

  after(async () => {
    await proxy?.cleanup();
    fs.rmSync(logDir, { recursive: true, force: true });
  });

  test('with no parameters lists every component logger in registry order', async () => {
    const r = await proxy.admin('/logging', 'POST');
    assert.equal(r.status, 200);
    assert.equal(r.body, listing(() => 'info'));
    assert.ok(r.body.startsWith('active loggers:\n  admin: info\n  aws: info\n'));
  });

  test('bad requests answer 400 with the usage and the listing, and change nothing', async () => {
    for (const query of ['level=loud', 'nope=debug', 'http=debug&admin=trace', 'level', 'http=DEBUG', 'level=warn']) {
      const r = await proxy.admin(`/logging?${query}`, 'POST');
      assert.equal(r.status, 400, query);
      assert.equal(r.body, LOGGING_USAGE + listing(() => 'info'), query);
    }
    assert.ok(LOGGING_USAGE.endsWith('levels: trace debug info warning error critical off \n'));
  });

  test('?<component>= sets one logger, ?level= sets them all', async () => {
    let r = await proxy.admin('/logging?upstream=trace', 'POST');
    assert.equal(r.status, 200);
    assert.equal(r.body, listing((name) => (name === 'upstream' ? 'trace' : 'info')));
    r = await proxy.admin('/logging?level=error', 'POST');
    assert.equal(r.body, listing(() => 'error'));
    r = await proxy.admin('/logging?level=info', 'POST');
    assert.equal(r.body, listing(() => 'info'));
  });

  test('both workers follow a change within one second', async () => {
    // At info, a refused request leaves no debug line: these must not be counted below.
    for (let i = 0; i < 4; i++) await garbage(port);
    assert.equal((await proxy.admin('/logging?http=debug', 'POST')).status, 200);
    const changedAt = Date.now();
    await sleep(1000 - (Date.now() - changedAt));
    // Every refused request from here on is logged by whichever worker took it, until both have.
    const workers = workerPids(proxy);
    assert.equal(workers.length, 2);
    let sent = 0;
    const deadline = Date.now() + 20_000;
    for (;;) {
      await garbage(port);
      sent++;
      const logged = await waitFor('the debug line of each refused request', () => {
        const pids = protocolErrorPids(logPath);
        return pids.length === sent ? pids : undefined;
      }, 5000);
      if (workers.every((pid) => logged.includes(pid))) break;
      assert.ok(Date.now() < deadline, `after ${sent} requests, only workers ${[...new Set(logged)]} of ${workers} took one`);
    }
    assert.equal((await proxy.admin('/logging?http=info', 'POST')).status, 200);
  });
});

describe('POST /logging and a restarted worker', { timeout: 60_000 }, () => {
  test('a worker started after a change logs at the levels it set', async () => {
    const logDir = makeTempDir();
    const logPath = path.join(logDir, 'proxy.log');
    const proxy = await startProxy(routedBootstrap(9), ['--log-path', logPath, '--log-format', '[%t][%l][%n] %v']);
    try {
      const port = await proxy.listenerPort('http_in');
      assert.equal((await proxy.admin('/logging?http=debug', 'POST')).status, 200);
      const [first] = workerPids(proxy);
      process.kill(first!, 'SIGKILL');
      const replacement = await waitFor('a replacement worker', () => {
        const pids = workerPids(proxy);
        return pids.length === 1 && pids[0] !== first ? pids[0] : undefined;
      });
      // Until it adopts the listen socket the connection waits in the backlog; then it is logged.
      await garbage(port);
      await waitFor('the new worker\'s debug line', () => (protocolErrorPids(logPath).includes(replacement!) ? true : undefined), 5000);
    } finally {
      await proxy.cleanup();
      fs.rmSync(logDir, { recursive: true, force: true });
    }
  });
});
