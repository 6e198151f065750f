import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FINE_GRAIN_LOGGING_USAGE } from '../../src/admin/fine_grain_logging_handler';
import { LOGGING_USAGE } from '../../src/admin/logging_handler';
import { COMPONENT_NAMES } from '../../src/log/components';
import { PACKAGE_ROOT } from '../../src/log/source_location';
import { request as httpRequest, startUpstream, type Upstream } from '../helpers/http_peers';
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

/** What the proxy logged so far; nothing before its first line. */
function logText(logPath: string): string {
  return fs.existsSync(logPath) ? fs.readFileSync(logPath, 'utf8') : '';
}

/** The pids (%t) of the debug lines the http logger wrote for refused requests, in order. */
function protocolErrorPids(logPath: string): number[] {
  return [...logText(logPath).matchAll(/^\[(\d+)\]\[debug\]\[http\] protocol error from /gm)].map((m) => Number(m[1]));
}

function workerPids(proxy: RunningProxy): number[] {
  return proxy.groupPids().filter((pid) => pid !== proxy.pid);
}

/**
 * Sends with `send` until `done()` holds, for up to 20 s. Which worker takes a connection is the
 * kernel's choice: sent one after another, 40 in a row went to one worker on a loaded machine, so
 * time bounds this, not a count.
 */
async function sendUntil(send: () => Promise<void>, done: () => boolean, failure: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!done()) {
    assert.ok(Date.now() < deadline, failure());
    await send();
  }
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
    await sendUntil(
      async () => {
        await garbage(port);
        sent++;
        await waitFor('the debug line of each refused request', () => (protocolErrorPids(logPath).length === sent ? true : undefined), 5000);
      },
      () => workers.every((pid) => protocolErrorPids(logPath).includes(pid)),
      () => `after ${sent} requests, only workers ${[...new Set(protocolErrorPids(logPath))]} of ${workers} took one`,
    );
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
    return [...logText(logPath).matchAll(new RegExp(`^\\[(\\d+)\\]\\[debug\\]\\[${WORKER_FILE}\\] \\[C\\d+\\] new connection$`, 'gm'))].map((m) => Number(m[1]));
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
    let sent = 0;
    await sendUntil(
      async () => {
        await garbage(port);
        sent++;
        await waitFor('the new connection line', () => (newConnectionLines().length === sent ? true : undefined), 5000);
      },
      () => workers.every((pid) => newConnectionLines().includes(pid)),
      () => `after ${sent} connections, only workers ${[...new Set(newConnectionLines())]} of ${workers} logged`,
    );
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
    await sendUntil(
      async () => {
        await garbage(port);
        await sleep(50);
      },
      () => newConnectionLines().includes(replacement),
      () => 'the replacement worker never logged a new connection at debug',
    );
  });
});

describe('fine-grain loggers are the source files that write the lines', { timeout: 60_000 }, () => {
  const ROUTER_FILE = 'src/filters/http/router.ts';
  const POOL_FILE = 'src/pool/http1_pool.ts';
  let upstream: Upstream;
  let proxy: RunningProxy;
  let logDir: string;
  let logPath: string;
  let port: number;

  /** Every line's pid, level, logger (%n), source file (%g) and message. */
  const lines = () => {
    return [...logText(logPath).matchAll(/^\[(\d+)\]\[(\w+)\]\[([^\]]*)\]\[([^\]]*)\] (.*)$/gm)].map(([, pid, level, logger, file, message]) => ({
      pid: Number(pid),
      level: level!,
      logger: logger!,
      file: file!,
      message: message!,
    }));
  };
  const listed = (body: string) => new Map([...body.matchAll(/^   (\S+): (\d)$/gm)].map((m) => [m[1]!, m[2]!]));

  before(async () => {
    upstream = await startUpstream('backend');
    logDir = makeTempDir();
    logPath = path.join(logDir, 'proxy.log');
    proxy = await startProxy(routedBootstrap(upstream.port), ['--concurrency', '2', '--enable-fine-grain-logging', '--log-path', logPath, '--log-format', '[%P][%l][%n][%g] %v']);
    port = await proxy.listenerPort('http_in');
  });

  after(async () => {
    await proxy?.cleanup();
    await upstream?.close();
    fs.rmSync(logDir, { recursive: true, force: true });
  });

  test('after a proxied request, the connection manager, router and pool files are listed, and only files that log', async () => {
    assert.equal((await httpRequest(port, { path: '/first' })).status, 200);
    const loggers = listed((await proxy.admin('/logging', 'POST')).body);
    for (const file of [ROUTER_FILE, 'src/filters/network/http_connection_manager/active_stream.ts', POOL_FILE, 'src/pool/upstream_connection.ts']) {
      assert.equal(loggers.get(file), '2', `${file} in ${[...loggers.keys()]}`);
    }
    for (const file of loggers.keys()) {
      const source = fs.readFileSync(path.join(PACKAGE_ROOT, file), 'utf8');
      assert.match(source, /\.(trace|debug|info|warn|error|critical)\(/, `${file} is listed but writes no line`);
    }
  });

  test('?<router file>=debug logs the router lines and no other file at debug, each under the file that writes it', async () => {
    const r = await proxy.admin(`/logging?${ROUTER_FILE}=debug`, 'POST');
    assert.equal(r.status, 200);
    assert.equal(listed(r.body).get(ROUTER_FILE), '1');
    assert.equal(listed(r.body).get(POOL_FILE), '2');
    assert.equal((await httpRequest(port, { path: '/routed' })).status, 200);
    await waitFor('the router line', () => lines().find((l) => l.message.endsWith("cluster 'backend' match for URL '/routed'")), 5000);
    const debug = lines().filter((l) => l.level === 'debug');
    assert.deepEqual([...new Set(debug.map((l) => l.logger))], [ROUTER_FILE]);
    for (const line of lines()) assert.equal(line.file, line.logger, `the location of ${JSON.stringify(line)}`);
  });

  test('a file logger a worker creates after the change gets the level its path was set to', async () => {
    assert.equal((await proxy.admin(`/logging?${POOL_FILE}=debug`, 'POST')).status, 200);
    // A replacement worker has no pool, nor its file logger, until it takes its first request.
    const [first, other] = workerPids(proxy);
    process.kill(first!, 'SIGKILL');
    const replacement = await waitFor('a replacement worker', () => workerPids(proxy).find((pid) => pid !== first && pid !== other));
    const poolPids = () => new Set(lines().filter((l) => l.level === 'debug' && l.logger === POOL_FILE).map((l) => l.pid));
    let sent = 0;
    await sendUntil(
      async () => {
        assert.equal((await httpRequest(port, { path: `/pool-${++sent}` })).status, 200);
        await sleep(20);
      },
      () => poolPids().has(replacement),
      () => 'the replacement worker never logged a pool line at debug',
    );
  });

  test('at debug, every line of every process is logged under the file that writes it', async () => {
    assert.equal((await proxy.admin('/logging?level=debug', 'POST')).status, 200);
    for (let sent = 1; sent <= 4; sent++) assert.equal((await httpRequest(port, { path: `/all-${sent}` })).status, 200);
    // An admin request, for the supervisor's connection and stream lines.
    assert.equal((await proxy.admin('/logging', 'POST')).status, 200);
    const all = await waitFor('a worker\'s client line and the admin connection line', () => {
      const logged = lines();
      const client = logged.some((l) => l.pid !== proxy.pid && l.level === 'debug' && l.logger === 'src/pool/http1_client_connection.ts');
      const admin = logged.some((l) => l.pid === proxy.pid && l.level === 'debug' && l.message.endsWith(' new connection'));
      return client && admin ? logged : undefined;
    }, 5000);
    for (const line of all) assert.equal(line.file, line.logger, `the location of ${JSON.stringify(line)}`);
  });
});
