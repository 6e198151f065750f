// The HTTP connection manager's file access logs through the real binary: Envoy 1.16's default
// format for a 200, a 503 with no healthy upstream (UH), an upstream reset (UC), an upstream
// timeout (UT) and a client that disconnects (DC); a JSON format and a status filter; whole
// lines from two workers under load; reopening on SIGUSR1; header bytes written as they came.

import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { closeServer, listen, startUpstream, type Upstream } from '../helpers/http_peers';
import { readLines, waitForLines } from '../helpers/log_lines';
import { livePidsWhere, makeTempDir, type RunningProxy, sleep, startProxy, waitFor } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 120_000 };
const FILE_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';
const WITH_H2LOAD = { skip: spawnSync('h2load', ['--version']).status === 0 ? false : 'h2load (Debian nghttp2-client) is not installed' };
const RESET_BODY = 'upstream connect error or disconnect/reset before headers. reset reason: connection termination';
const LOAD_REQUESTS = 100_000;
/** What the router changed on the way up, and the framing the codecs keep out of the header list. */
const FORWARDED_FORMAT =
  '%REQ(:PATH)% %REQ(X-PROXY-ORIGINAL-PATH)% %REQ(:AUTHORITY)% %REQ(X-FORWARDED-PROTO)% %REQ(X-PROXY-EXPECTED-RQ-TIMEOUT-MS)% %RESP(CONTENT-LENGTH)%\n';

/** Envoy 1.16's default format, field by field, for one request of ours (user-agent `t`, host `h`). */
function defaultLine(fields: { path: string; status: number; flags: string; sent: number; serviceTime: boolean; upstream: boolean }): RegExp {
  const serviceTime = fields.serviceTime ? '\\d+' : '-';
  const host = fields.upstream ? '"127\\.0\\.0\\.1:\\d+"' : '"-"';
  return new RegExp(
    `^\\[\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z\\] "GET ${fields.path} HTTP/1\\.1" ${fields.status} ${fields.flags} 0 ${fields.sent} \\d+ ${serviceTime} "-" "t" "[0-9a-f-]{36}" "h" ${host}$`,
  );
}

function get(port: number, pathName: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: pathName, agent: false, headers: { host: 'h', 'user-agent': 't' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}

describe('HTTP access logs', TIMEOUT, () => {
  let dir: string;
  let upstream: Upstream;
  let resetter: net.Server;
  let silent: net.Server;
  const silentSockets = new Set<net.Socket>();
  let proxy: RunningProxy;
  let port: number;
  let defaultPath: string;
  let jsonPath: string;
  let errorsPath: string;
  let forwardedPath: string;
  let bytesPath: string;

  before(async () => {
    dir = makeTempDir();
    defaultPath = path.join(dir, 'default.log');
    jsonPath = path.join(dir, 'json.log');
    errorsPath = path.join(dir, 'errors.log');
    forwardedPath = path.join(dir, 'forwarded.log');
    bytesPath = path.join(dir, 'bytes.log');
    upstream = await startUpstream('web', (_req, res) => res.end('hello'));
    // Closes every connection at once: the request is reset before its response (UC).
    resetter = net.createServer((socket) => socket.destroy());
    // Never answers: the route timeout (UT) and the client's disconnect (DC) happen first.
    silent = net.createServer((socket) => {
      silentSockets.add(socket);
      socket.on('close', () => silentSockets.delete(socket));
    });
    const resetPort = await listen(resetter);
    const silentPort = await listen(silent);
    const routes = [
      { match: { prefix: '/ok' }, route: { cluster: 'web' } },
      { match: { prefix: '/uh' }, route: { cluster: 'empty' } },
      { match: { prefix: '/uc' }, route: { cluster: 'reset' } },
      { match: { prefix: '/ut' }, route: { cluster: 'silent', timeout: '0.2s' } },
      { match: { prefix: '/dc' }, route: { cluster: 'silent' } },
      { match: { prefix: '/rw' }, route: { cluster: 'web', prefix_rewrite: '/ok', host_rewrite_literal: 'rewritten' } },
    ];
    const accessLog = [
      { name: 'envoy.access_loggers.file', typed_config: { '@type': FILE_LOG, path: defaultPath } },
      { name: 'envoy.access_loggers.file', typed_config: { '@type': FILE_LOG, path: jsonPath, typed_json_format: { code: '%RESPONSE_CODE%', path: '%REQ(:PATH)%', flags: '%RESPONSE_FLAGS%' } } },
      {
        name: 'envoy.access_loggers.file',
        filter: { status_code_filter: { comparison: { op: 'GE', value: { default_value: 500, runtime_key: 'access_log.errors' } } } },
        typed_config: { '@type': FILE_LOG, path: errorsPath, format: '%RESPONSE_CODE% %REQ(:PATH)%\n' },
      },
      {
        name: 'envoy.access_loggers.file',
        // Filters read the same headers: only the rewritten request passes.
        filter: { header_filter: { header: { name: ':authority', exact_match: 'rewritten' } } },
        typed_config: { '@type': FILE_LOG, path: forwardedPath, format: FORWARDED_FORMAT },
      },
      {
        name: 'envoy.access_loggers.file',
        filter: { header_filter: { header: { name: 'x-name', present_match: true } } },
        typed_config: { '@type': FILE_LOG, path: bytesPath, format: '« %REQ(X-NAME)% »\n' },
      },
    ];
    proxy = await startProxy(
      {
        static_resources: {
          listeners: [httpListener('in', 0, routes, { access_log: accessLog })],
          clusters: [
            localCluster('web', upstream.port),
            { name: 'empty', connect_timeout: '1s', load_assignment: { cluster_name: 'empty', endpoints: [] } },
            localCluster('reset', resetPort),
            localCluster('silent', silentPort),
          ],
        },
      },
      ['--concurrency', '2', '--file-flush-interval-msec', '50'],
    );
    port = await proxy.listenerPort('in');
  });

  after(async () => {
    await proxy?.cleanup();
    await upstream?.close();
    for (const socket of silentSockets) socket.destroy();
    if (resetter !== undefined) await closeServer(resetter);
    if (silent !== undefined) await closeServer(silent);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("the default format is Envoy's, byte for byte: 200, UH, UC, UT and DC", async () => {
    assert.equal(await get(port, '/ok'), 200);
    assert.equal(await get(port, '/uh'), 503);
    assert.equal(await get(port, '/uc'), 503);
    assert.equal(await get(port, '/ut'), 504);
    // The client leaves (a reset: a half-close would still wait for the answer) before the silent upstream answers.
    const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /dc HTTP/1.1\r\nhost: h\r\nuser-agent: t\r\n\r\n'));
    await sleep(200);
    socket.resetAndDestroy();
    const lines = await waitForLines(defaultPath, 5);
    assert.equal(lines.length, 5, lines.join('\n'));
    const expected = [
      defaultLine({ path: '/ok', status: 200, flags: '-', sent: 5, serviceTime: true, upstream: true }),
      defaultLine({ path: '/uh', status: 503, flags: 'UH', sent: 'no healthy upstream'.length, serviceTime: false, upstream: false }),
      defaultLine({ path: '/uc', status: 503, flags: 'UC', sent: RESET_BODY.length, serviceTime: false, upstream: true }),
      defaultLine({ path: '/ut', status: 504, flags: 'UT', sent: 'upstream request timeout'.length, serviceTime: false, upstream: true }),
      defaultLine({ path: '/dc', status: 0, flags: 'DC', sent: 0, serviceTime: false, upstream: true }),
    ];
    // Requests on different workers may be written in either order: each line is matched to its path.
    for (const pattern of expected) assert.ok(lines.some((line) => pattern.test(line)), `no line matches ${pattern}:\n${lines.join('\n')}`);
  });

  test('typed_json_format keeps numbers numbers; the status filter keeps only the 5xx lines', async () => {
    const json = (await waitForLines(jsonPath, 5)).map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(
      json.map((entry) => `${entry.path} ${entry.code} ${entry.flags}`).sort(),
      ['/dc 0 DC', '/ok 200 -', '/uc 503 UC', '/uh 503 UH', '/ut 504 UT'],
    );
    assert.equal(typeof json[0].code, 'number');
    assert.deepEqual((await waitForLines(errorsPath, 3)).sort(), ['503 /uc', '503 /uh', '504 /ut']);
  });

  test('SIGUSR1 reopens the files: a rotated log keeps its lines, new ones go to a new file', async () => {
    const rotated = `${defaultPath}.1`;
    fs.renameSync(defaultPath, rotated);
    process.kill(proxy.pid, 'SIGUSR1');
    // The workers hear of it through the supervisor; a request after that goes to the new file.
    let lines: string[] = [];
    for (let i = 0; i < 50 && lines.length === 0; i++) {
      await get(port, '/ok');
      lines = await waitForLines(defaultPath, 1, 200);
    }
    assert.ok(lines.length > 0, 'nothing was written to the reopened file');
    assert.ok(readLines(rotated).length >= 5);
  });

  test('a killed worker loses at most what it had not flushed: the lines written stay whole, its successor logs on', async () => {
    const whole = /^\[\S+\] "GET \/ok HTTP\/1\.1" 200 - 0 5 \d+ \d+ "-" "t" "[0-9a-f-]{36}" "h" "127\.0\.0\.1:\d+"$/;
    const start = readLines(defaultPath).length;
    for (let i = 0; i < 40; i++) await get(port, '/ok');
    assert.equal((await waitForLines(defaultPath, start + 40)).length, start + 40);
    const workerPids = () => livePidsWhere((stat) => stat.ppid === proxy.pid);
    const workers = workerPids();
    for (const pid of workers) process.kill(pid, 'SIGKILL');
    await waitFor('restarted workers', () => (workerPids().filter((pid) => !workers.includes(pid)).length === workers.length ? true : undefined));
    // The successors take the listener over; the next requests are logged by them.
    for (let i = 0; i < 20; i++) await get(port, '/ok');
    const lines = (await waitForLines(defaultPath, start + 60)).slice(start);
    assert.equal(lines.length, 60);
    assert.deepEqual(lines.filter((line) => !whole.test(line)), []);
  });

  test(`${LOAD_REQUESTS} requests through 2 workers: ${LOAD_REQUESTS} whole lines`, WITH_H2LOAD, async () => {
    const loadPath = path.join(dir, 'default.log');
    const before = readLines(loadPath).length;
    // Not spawnSync: the upstream answers from this process's event loop.
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile('h2load', ['--h1', '-n', String(LOAD_REQUESTS), '-c', '16', '-t', '1', `http://127.0.0.1:${port}/ok`], { timeout: 90_000 }, (error, out, err) =>
        error === null ? resolve(out) : reject(new Error(`h2load: ${error.message}\n${err}`)),
      ),
    );
    assert.match(stdout, new RegExp(`${LOAD_REQUESTS} succeeded`), stdout);
    const lines = (await waitForLines(loadPath, before + LOAD_REQUESTS, 20_000)).slice(before);
    assert.equal(lines.length, LOAD_REQUESTS);
    const whole = /^\[\S+\] "GET \/ok HTTP\/1\.1" 200 - 0 5 \d+ \d+ "-" "h2load nghttp2\/[\d.]+" "[0-9a-f-]{36}" "127\.0\.0\.1:\d+" "127\.0\.0\.1:\d+"$/;
    const broken = lines.filter((line) => !whole.test(line));
    assert.deepEqual(broken.slice(0, 3), []);
  });

  test('REQ() reads the request as the router sent it, as Envoy (whose router edits the header map); RESP(CONTENT-LENGTH) the framing', async () => {
    assert.equal(await get(port, '/rw'), 200);
    const lines = await waitForLines(forwardedPath, 1);
    assert.deepEqual(lines, ['/ok /rw rewritten http 15000 5']);
  });

  test("header bytes reach the file as they came, the format's own text as UTF-8 (Envoy writes its strings' bytes)", async () => {
    // "café" in UTF-8, and a byte that is no UTF-8 at all: a header value may carry either.
    const head = Buffer.concat([Buffer.from('GET /ok HTTP/1.1\r\nhost: h\r\nx-name: caf'), Buffer.from([0xc3, 0xa9, 0x20, 0xff]), Buffer.from('\r\nconnection: close\r\n\r\n')]);
    const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
    socket.resume();
    await new Promise((resolve) => socket.on('close', resolve));
    await waitFor('the line', () => (fs.existsSync(bytesPath) && fs.readFileSync(bytesPath).length > 0 ? true : undefined));
    assert.deepEqual(fs.readFileSync(bytesPath), Buffer.concat([Buffer.from('« café '), Buffer.from([0xff]), Buffer.from(' »\n')]));
  });
});
