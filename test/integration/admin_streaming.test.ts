// The admin server streams a body given as chunks: chunked transfer coding, the whole body
// delivered, the event loop free between chunks, HEAD answered with headers only, a client that
// leaves ending the generator, and the bytes sent in the access log.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import { after, before, test } from 'node:test';
import { AdminHandler, AdminServer } from '../../src/admin/admin_server';
import { ConnectionIds } from '../../src/log/connection_log';
import { createHeapStatsStore } from '../../src/stats/store';
import { silentLogger } from '../helpers/data_plane';
import { request, waitFor } from '../helpers/proxy_process';

const CHUNKS = 200;
const CHUNK = 'x'.repeat(64 * 1024 - 1) + '\n';

let server: AdminServer;
let base: string;
const accessLog: string[] = [];
let bigStarted = 0;
let endlessStopped = false;
const caught: unknown[] = [];

function handler(path: string, body: () => Iterable<string>): AdminHandler {
  return { path, help: path, mutatesState: false, decodeQuery: true, handle: () => ({ status: 200, body: body() }) };
}

before(async () => {
  const handlers = [
    handler('/big', function* () {
      bigStarted++;
      for (let i = 0; i < CHUNKS; i++) yield CHUNK;
    }),
    handler('/endless', function* () {
      try {
        for (;;) yield CHUNK;
      } finally {
        endlessStopped = true;
      }
    }),
    handler('/broken', function* () {
      yield CHUNK;
      throw new Error('renderer bug');
    }),
  ];
  server = new AdminServer(handlers, createHeapStatsStore(), silentLogger, { write: (line) => accessLog.push(line) }, { ids: ConnectionIds.forOneProcess(), connHandler: silentLogger, http: silentLogger }, (e) => caught.push(e));
  const address = await server.listen('127.0.0.1', 0);
  base = `http://127.0.0.1:${address.port}`;
});

after(() => server.close());

test('a large body arrives whole, chunked, while timers still fire', { timeout: 30_000 }, async () => {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  try {
    const res = await request(`${base}/big`);
    assert.equal(res.status, 200);
    assert.equal(res.headers['transfer-encoding'], 'chunked');
    assert.equal(res.headers['content-length'], undefined);
    assert.equal(res.body.length, CHUNKS * CHUNK.length);
    assert.equal(res.body, CHUNK.repeat(CHUNKS));
  } finally {
    clearInterval(timer);
  }
  assert.ok(ticks > 0, 'the stream held the event loop throughout');
  await waitFor('the access log line', () => accessLog.find((l) => l.includes('"GET /big HTTP/1.1" 200')));
  assert.match(accessLog.find((l) => l.includes('"GET /big '))!, new RegExp(` 200 - 0 ${CHUNKS * CHUNK.length} `));
});

test('HEAD gets the headers only, and the body is never generated', { timeout: 30_000 }, async () => {
  const startedBefore = bigStarted;
  const res = await request(`${base}/big`, { method: 'HEAD' });
  assert.equal(res.status, 200);
  assert.equal(res.body, '');
  assert.equal(res.headers['content-length'], undefined);
  assert.equal(bigStarted, startedBefore);
  await waitFor('the access log line', () => accessLog.find((l) => l.includes('"HEAD /big HTTP/1.1" 200 - 0 0 ')));
});

test('a client that disconnects mid-stream stops the generator', { timeout: 30_000 }, async () => {
  await new Promise<void>((resolve, reject) => {
    const req = http.get(`${base}/endless`, { agent: false }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', (e) => {
      if (!req.destroyed) reject(e);
    });
  });
  await waitFor('the generator to stop', () => (endlessStopped ? true : undefined), 10_000);
});

test('a renderer that throws cuts the response short and is reported as a caught failure', { timeout: 10_000 }, async () => {
  await assert.rejects(request(`${base}/broken`));
  await waitFor('the failure reported', () => (caught.length > 0 ? true : undefined));
  assert.deepEqual(
    caught.map((e) => (e as Error).message),
    ['renderer bug'],
  );
});
