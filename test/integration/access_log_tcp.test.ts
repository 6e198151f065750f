// tcp_proxy's file access logs through the real binary: the default format and custom ones,
// the response flags of a failed connection, reopening on /reopen_logs, the flush at a clean
// exit, and --mode validate refusing what serving would.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { test, type TestContext } from 'node:test';
import { assertRefusedAlike } from '../helpers/cli_runs';
import { localCluster, tcpProxyListener, type Json } from '../helpers/config_fixtures';
import { tcpUpstream } from '../helpers/http_peers';
import { refusedPort } from '../helpers/refused_port';
import { makeTempDir, startProxy, waitFor, type RunningProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
const FILE_TYPE = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';
const CUSTOM_FORMAT = '%UPSTREAM_CLUSTER% %BYTES_RECEIVED% %BYTES_SENT% %RESPONSE_FLAGS% %DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT% %UPSTREAM_HOST% %PROTOCOL%\n';

/** An echo server on 127.0.0.1, closed after the test. */
const echoServer = (t: TestContext): Promise<number> => tcpUpstream(t, (socket) => socket.pipe(socket));

/** Listener `name` (port 0) proxying to `cluster`, with these access logs. */
function loggedListener(name: string, cluster: string, accessLog: Json[]): Json {
  const listener = tcpProxyListener(name, 0, cluster);
  listener.filter_chains[0].filters[0].typed_config.access_log = accessLog;
  return listener;
}

const fileLog = (file: string, format: Json = {}): Json => ({ name: 'envoy.access_loggers.file', typed_config: { '@type': FILE_TYPE, path: file, ...format } });

/** Sends `text`, reads the echo, closes; resolves once the proxy has closed its side. */
async function roundTrip(port: number, text: string): Promise<void> {
  const socket = net.connect({ port, host: '127.0.0.1' });
  await new Promise<void>((resolve, reject) => {
    let echoed = '';
    socket.on('data', (chunk: Buffer) => {
      echoed += chunk.toString();
      if (echoed === text) socket.end();
    });
    socket.on('close', () => resolve());
    socket.on('error', reject);
    socket.write(text);
  });
}

/** Connects and waits for the proxy to close the connection. */
async function refused(port: number): Promise<void> {
  const socket = net.connect({ port, host: '127.0.0.1' });
  await new Promise<void>((resolve) => {
    socket.on('close', () => resolve());
    socket.on('error', () => undefined);
    socket.resume();
  });
}

const linesOf = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');

async function lines(file: string, count: number): Promise<string[]> {
  return waitFor(`${count} line(s) in ${path.basename(file)}`, () => {
    const all = linesOf(file).split('\n').slice(0, -1);
    return all.length >= count ? all : undefined;
  });
}

async function proxyWith(t: TestContext, dir: string, listeners: Json[], clusters: Json[], args: string[] = []): Promise<RunningProxy> {
  const proxy = await startProxy({ static_resources: { listeners, clusters } }, ['--file-flush-interval-msec', '20', ...args]);
  t.after(() => proxy.cleanup());
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return proxy;
}

test('tcp_proxy logs each connection at its end: the default format and a custom one, from two workers', TIMEOUT, async (t) => {
  const dir = makeTempDir();
  const upstreamPort = await echoServer(t);
  const [defaults, custom, json] = ['default.log', 'custom.log', 'typed.json'].map((name) => path.join(dir, name));
  const proxy = await proxyWith(
    t,
    dir,
    [
      loggedListener('tcp', 'backend', [
        fileLog(defaults),
        fileLog(custom, { format: CUSTOM_FORMAT }),
        fileLog(json, { typed_json_format: { received: '%BYTES_RECEIVED%', host: '%UPSTREAM_HOST%', cluster: '%UPSTREAM_CLUSTER%', duration: '%DURATION%', flags: '%RESPONSE_FLAGS%' } }),
      ]),
    ],
    [localCluster('backend', upstreamPort)],
    ['--concurrency', '2'],
  );
  const port = await proxy.listenerPort('tcp');
  for (let i = 0; i < 4; i++) await roundTrip(port, 'hello');

  const upstream = `127.0.0.1:${upstreamPort}`;
  for (const line of await lines(defaults, 4)) {
    assert.match(line, /^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] "- - -" 0 - 5 5 \d+ - "-" "-" "-" "-" "127\.0\.0\.1:\d+"$/);
    assert.ok(line.endsWith(`"${upstream}"`), line);
  }
  assert.deepEqual(await lines(custom, 4), Array(4).fill(`backend 5 5 - 127.0.0.1 ${upstream} -`));
  for (const line of await lines(json, 4)) {
    const entry = JSON.parse(line) as Record<string, unknown>;
    assert.deepEqual(Object.keys(entry), ['received', 'host', 'cluster', 'duration', 'flags']);
    assert.equal(entry['received'], 5);
    assert.equal(entry['host'], upstream);
    assert.equal(entry['cluster'], 'backend');
    assert.equal(typeof entry['duration'], 'number');
    assert.equal(entry['flags'], '-');
  }
});

test('a failed upstream connection is logged UF, a missing cluster NR; /reopen_logs moves on to a new file', TIMEOUT, async (t) => {
  const dir = makeTempDir();
  const file = path.join(dir, 'flags.log');
  const log = [fileLog(file, { format: '%UPSTREAM_CLUSTER% %RESPONSE_FLAGS% %UPSTREAM_HOST% %BYTES_RECEIVED%\n' })];
  const dead = await refusedPort();
  const proxy = await proxyWith(t, dir, [loggedListener('dead', 'nowhere', log)], [localCluster('nowhere', dead)]);
  const port = await proxy.listenerPort('dead');
  await refused(port);
  assert.deepEqual(await lines(file, 1), [`nowhere UF 127.0.0.1:${dead} 0`]);

  fs.renameSync(file, `${file}.1`);
  assert.equal((await proxy.admin('/reopen_logs', 'POST')).status, 200);
  // The reopen is asynchronous: connections until a line shows up in the new file.
  await waitFor('a line in the reopened file', async () => {
    await refused(port);
    return linesOf(file) === '' ? undefined : true;
  });
  assert.match(linesOf(file), /^(nowhere UF 127\.0\.0\.1:\d+ 0\n)+$/);
  assert.match(linesOf(`${file}.1`), /^(nowhere UF 127\.0\.0\.1:\d+ 0\n)+$/);
});

test('entries wait for the flush interval, and a clean exit writes them', TIMEOUT, async (t) => {
  const dir = makeTempDir();
  const file = path.join(dir, 'late.log');
  const upstreamPort = await echoServer(t);
  const proxy = await proxyWith(t, dir, [loggedListener('tcp', 'backend', [fileLog(file, { format: '%BYTES_SENT%\n' })])], [localCluster('backend', upstreamPort)], [
    '--file-flush-interval-msec',
    '600000',
  ]);
  await roundTrip(await proxy.listenerPort('tcp'), 'abc');
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(linesOf(file), '');
  proxy.child.kill('SIGTERM');
  const exited = await proxy.exited;
  assert.equal(exited.code, 0, proxy.stderr);
  assert.equal(linesOf(file), '3\n');
});

test('--mode validate refuses a bad access log by its field path, as serving does', TIMEOUT, async (t) => {
  const dir = makeTempDir();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const configPath = path.join(dir, 'bootstrap.json');
  const bootstrap = {
    static_resources: { listeners: [loggedListener('tcp', 'backend', [fileLog(path.join(dir, 'x.log'), { format: '%NO_SUCH%' })])], clusters: [localCluster('backend', 1)] },
  };
  fs.writeFileSync(configPath, JSON.stringify(bootstrap));
  const path0 = 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config.access_log[0].typed_config.format';
  await assertRefusedAlike(configPath, new RegExp(`${path0.replace(/[[\].]/g, '\\$&')}: Not supported field in StreamInfo: NO_SUCH`));
});
