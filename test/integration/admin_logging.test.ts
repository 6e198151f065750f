import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FINE_GRAIN_LOGGING_USAGE } from '../../src/admin/fine_grain_logging_handler';
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

describe('POST /logging with --enable-fine-grain-logging', { timeout: 60_000 }, () => {
  // Made by the workers only, and the logger of their connection handler's lines.
  const WORKER_FILE = 'src/listener/listener_manager.ts';
  // Made by the supervisor only.
  const SUPERVISOR_FILE = 'src/server/supervisor.ts';
  let proxy: RunningProxy;
  let logDir: string;
  let logPath: string;
  let port: number;

  const newConnectionLines = () => {
    const text = fs.existsSync(logPath) ? fs.readFileSync(logPath, 'utf8') : '';
    return [...text.matchAll(new RegExp(`^\\[(\\d+)\\]\\[debug\\]\\[${WORKER_FILE}\\] \\[C\\d+\\] new connection$`, 'gm'))].map((m) => Number(m[1]));
  };
  const levelOf = (body: string, file: string) => new RegExp(`^   ${file}: (\\d)$`, 'm').exec(body)?.[1];

  before(async () => {
    logDir = makeTempDir();
    logPath = path.join(logDir, 'proxy.log');
    proxy = await startProxy(routedBootstrap(9), ['--concurrency', '2', '--enable-fine-grain-logging', '--log-path', logPath, '--log-format', '[%P][%l][%n] %v']);
    port = await proxy.listenerPort('http_in');
  });

  after(async () => {
    await proxy?.cleanup();
    fs.rmSync(logDir, { recursive: true, force: true });
  });

  test("lists the file loggers of the supervisor and the workers, as Envoy's fine-grain listing", async () => {
    const r = await proxy.admin('/logging', 'POST');
    assert.equal(r.status, 200);
    assert.match(r.body, /^active loggers:\n(   src\/[\w/]+\.ts: 2\n)+$/);
    assert.equal(levelOf(r.body, WORKER_FILE), '2');
    assert.equal(levelOf(r.body, SUPERVISOR_FILE), '2');
  });

  test('?<path>=<level> sets that file logger in every worker', async () => {
    await garbage(port);
    assert.deepEqual(newConnectionLines(), [], 'at info, no debug line');
    const r = await proxy.admin(`/logging?${WORKER_FILE}=debug`, 'POST');
    assert.equal(r.status, 200);
    assert.equal(levelOf(r.body, WORKER_FILE), '1');
    assert.equal(levelOf(r.body, SUPERVISOR_FILE), '2');
    // Each worker logs the connections it takes at debug now; both take some in time.
    const workers = workerPids(proxy);
    for (let sent = 1; ; sent++) {
      await garbage(port);
      const pids = await waitFor('the new connection line', () => (newConnectionLines().length === sent ? newConnectionLines() : undefined), 5000);
      if (workers.every((pid) => pids.includes(pid))) break;
      assert.ok(sent < 40, `only workers ${[...new Set(pids)]} of ${workers} logged`);
    }
  });

  test('?paths= sets several, ?level= all; an unknown path or level is refused and changes nothing', async () => {
    let r = await proxy.admin(`/logging?paths=${SUPERVISOR_FILE}:trace,${WORKER_FILE}:critical`, 'POST');
    assert.equal(r.status, 200);
    assert.equal(levelOf(r.body, SUPERVISOR_FILE), '0');
    assert.equal(levelOf(r.body, WORKER_FILE), '5');
    for (const query of ['src/nope.ts=debug', `${WORKER_FILE}=loud`, `paths=${WORKER_FILE}:info,src/nope.ts:info`, `paths=${WORKER_FILE}`, 'level=warn', `${WORKER_FILE}=info&level=info`]) {
      r = await proxy.admin(`/logging?${query}`, 'POST');
      assert.equal(r.status, 400, query);
      assert.ok(r.body.startsWith(FINE_GRAIN_LOGGING_USAGE), query);
      assert.equal(levelOf(r.body, WORKER_FILE), '5', query);
    }
    r = await proxy.admin('/logging?level=warning', 'POST');
    assert.equal(r.status, 200);
    assert.match(r.body, /^active loggers:\n(   src\/[\w/]+\.ts: 3\n)+$/);
  });

  test('a worker started after a change keeps the file levels it set', async () => {
    assert.equal((await proxy.admin(`/logging?${WORKER_FILE}=debug`, 'POST')).status, 200);
    const [first, other] = workerPids(proxy);
    process.kill(first!, 'SIGKILL');
    const replacement = await waitFor('a replacement worker', () => workerPids(proxy).find((pid) => pid !== first && pid !== other));
    for (let sent = 0; !newConnectionLines().includes(replacement); sent++) {
      assert.ok(sent < 40, 'the replacement worker never logged a new connection at debug');
      await garbage(port);
      await sleep(50);
    }
  });
});
