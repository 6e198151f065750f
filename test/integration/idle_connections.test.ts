// What an idle keep-alive connection no longer holds of its own, through the real binary: HTTP/1
// streams wait between requests in a pool shared by the connection manager's connections, so a
// request must see its own connection whichever stream serves it (HTTP/1.1 and h2c); and the
// connections' idle_timeout runs on one shared list, each connection from its own last response.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import type * as net from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { startUpstream, type Upstream } from '../helpers/http_peers';
import { waitForLines } from '../helpers/log_lines';
import { makeTempDir, type RunningProxy, sleep, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
const FILE_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';

interface Answer {
  /** The x-client header the upstream received: the route's %DOWNSTREAM_REMOTE_ADDRESS%. */
  readonly client: string;
  /** The client's own address on its connection. */
  readonly self: string;
  readonly socket: net.Socket;
}

/** GET `pathName` through `agent` (one keep-alive connection). */
function get(port: number, agent: http.Agent, pathName: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: pathName, agent }, (res) => {
      // The agent takes the socket back at the response's end.
      const socket = res.socket;
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        const seen = JSON.parse(body) as { headers: Record<string, string> };
        resolve({ client: seen.headers['x-client']!, self: `127.0.0.1:${socket.localPort}`, socket });
      });
    });
    req.on('error', reject);
  });
}

function h2get(session: http2.ClientHttp2Session, pathName: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': pathName });
    let body = '';
    stream.on('data', (c: Buffer) => (body += c.toString()));
    stream.on('end', () => {
      const seen = JSON.parse(body) as { headers: Record<string, string> };
      resolve({ client: seen.headers['x-client']!, self: `127.0.0.1:${session.socket.localPort}`, socket: session.socket as net.Socket });
    });
    stream.on('error', reject);
    stream.end();
  });
}

describe('idle keep-alive connections', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  let logDir: string | undefined;
  let logPath: string;
  const ports: Record<string, number> = {};

  before(async () => {
    upstream = await startUpstream('web');
    logDir = makeTempDir();
    logPath = path.join(logDir, 'access.log');
    const routes = [
      {
        match: { prefix: '/' },
        route: { cluster: 'web' },
        request_headers_to_add: [{ header: { key: 'x-client', value: '%DOWNSTREAM_REMOTE_ADDRESS%' } }],
      },
    ];
    const accessLog = [{ name: 'log', typed_config: { '@type': FILE_LOG, path: logPath, log_format: { text_format: '%REQ(:PATH)% %CONNECTION_ID% %DOWNSTREAM_REMOTE_ADDRESS%\n' } } }];
    proxy = await startProxy({
      static_resources: {
        listeners: [
          httpListener('shared', 0, routes, { stat_prefix: 'shared', access_log: accessLog }),
          httpListener('idle', 0, routes, { stat_prefix: 'idle', common_http_protocol_options: { idle_timeout: '1s' } }),
        ],
        clusters: [localCluster('web', upstream.port)],
      },
    });
    for (const name of ['shared', 'idle']) ports[name] = await proxy.listenerPort(name);
  });

  after(async () => {
    await proxy?.cleanup();
    await upstream?.close();
    if (logDir !== undefined) fs.rmSync(logDir, { recursive: true, force: true });
  });

  test('HTTP/1: requests taking turns on two connections each see their own connection, in headers and access log', async () => {
    const agents = [new http.Agent({ keepAlive: true, maxSockets: 1 }), new http.Agent({ keepAlive: true, maxSockets: 1 })];
    try {
      const port = ports.shared!;
      // One at a time (the stream the first connection's request ended goes to the second's), then both at once.
      const answers: [string, Answer][] = [];
      for (const round of ['1', '2']) {
        for (const [i, agent] of agents.entries()) answers.push([`/c${i}-${round}`, await get(port, agent, `/c${i}-${round}`)]);
      }
      const both = await Promise.all(agents.map((agent, i) => get(port, agent, `/c${i}-3`)));
      both.forEach((answer, i) => answers.push([`/c${i}-3`, answer]));
      for (const [pathName, answer] of answers) assert.equal(answer.client, answer.self, pathName);
      // Each agent kept its one connection.
      const selves = new Map(answers.map(([pathName, answer]) => [pathName.slice(0, 3), answer.self]));
      assert.equal(new Set(answers.map(([, answer]) => answer.self)).size, 2);

      const lines = await waitForLines(logPath, answers.length);
      const idOf = new Map<string, string>();
      for (const line of lines) {
        const [pathName, id, remote] = line.split(' ');
        const connection = pathName!.slice(0, 3);
        assert.equal(remote, selves.get(connection), line);
        assert.equal(idOf.get(connection) ?? id, id, `one connection id per connection: ${line}`);
        idOf.set(connection, id!);
      }
      assert.notEqual(idOf.get('/c0'), idOf.get('/c1'));
    } finally {
      for (const agent of agents) agent.destroy();
    }
  });

  test('h2c: streams of two sessions each see their own connection', async () => {
    const sessions = [0, 1].map(() => http2.connect(`http://127.0.0.1:${ports.shared}`));
    try {
      for (const session of sessions) session.on('error', () => undefined);
      const answers = await Promise.all([...sessions, ...sessions].map((session, i) => h2get(session, `/h${i}`)));
      for (const answer of answers) assert.equal(answer.client, answer.self);
      assert.equal(new Set(answers.map((answer) => answer.self)).size, 2);
    } finally {
      for (const session of sessions) session.destroy();
    }
  });

  test('idle_timeout: each connection closes its own idle time after its last request, a busy one stays open', async () => {
    const port = ports.idle!;
    const quiet = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const busy = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const closedAt = new Map<http.Agent, number>();
    const watch = (agent: http.Agent, answer: Answer): void => {
      answer.socket.once('close', () => closedAt.set(agent, performance.now()));
    };
    try {
      watch(quiet, await get(port, quiet, '/quiet'));
      const quietDone = performance.now();
      let busyDone = 0;
      // Requests 200 ms apart for 2.4 s: the busy connection is never idle for its 1 s.
      for (let i = 0; i < 12; i++) {
        const answer = await get(port, busy, `/busy-${i}`);
        if (i === 0) watch(busy, answer);
        busyDone = performance.now();
        await sleep(200);
      }
      assert.ok(closedAt.has(quiet), 'the quiet connection closed');
      const quietIdle = closedAt.get(quiet)! - quietDone;
      assert.ok(quietIdle >= 950 && quietIdle < 2_300, `the quiet connection closed after ${quietIdle.toFixed(0)} ms idle`);
      assert.ok(!closedAt.has(busy), 'the busy connection is open');
      for (let i = 0; i < 100 && !closedAt.has(busy); i++) await sleep(50);
      const busyIdle = closedAt.get(busy)! - busyDone;
      assert.ok(busyIdle >= 950, `the busy connection closed after ${busyIdle.toFixed(0)} ms idle`);
      assert.equal(await proxy.stat('http.idle.downstream_cx_idle_timeout'), 2);
    } finally {
      quiet.destroy();
      busy.destroy();
    }
  });
});
