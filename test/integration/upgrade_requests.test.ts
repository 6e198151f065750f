// An HTTP/1.1 upgrade (a WebSocket handshake) on a route without upgrade_configs is answered 403
// and counted in downstream_rq_ws_on_non_ws_route, as Envoy 1.16 does, never forwarded as a plain
// GET; an h2c upgrade is not one (Envoy's codec drops it) and goes through.

import assert from 'node:assert/strict';
import * as net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { startUpstream, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };
const COUNTER = 'http.ingress_http.downstream_rq_ws_on_non_ws_route';

/** One request written raw on a fresh connection; resolves with the status line and the body after the head. */
function exchange(port: number, head: string): Promise<{ status: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = /\r\ncontent-length: (\d+)/i.exec(received.slice(0, end));
      const body = received.slice(end + 4);
      if (length !== null && body.length < Number(length[1])) return;
      socket.destroy();
      resolve({ status: received.slice(0, received.indexOf('\r\n')), body });
    });
    socket.on('error', reject);
  });
}

describe('upgrade requests on a route without upgrade_configs', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  let port: number;

  before(async () => {
    upstream = await startUpstream('web', (_req, res) => res.end('upstream'));
    proxy = await startProxy({ static_resources: { listeners: [httpListener('up', 0, [{ match: { prefix: '/' }, route: { cluster: 'web' } }])], clusters: [localCluster('web', upstream.port)] } });
    port = await proxy.listenerPort('up');
  });

  after(async () => {
    await proxy?.cleanup();
    await upstream?.close();
  });

  test('a WebSocket handshake gets 403 and is counted; the upstream never sees it', async () => {
    const websocket = 'GET /chat HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n';
    assert.equal((await exchange(port, websocket)).status, 'HTTP/1.1 403 Forbidden');
    assert.equal(await proxy.stat(COUNTER), 1);
    assert.equal(upstream.seen.length, 0);
  });

  test('an h2c upgrade, or an Upgrade header Connection does not name, is an ordinary request', async () => {
    const h2c = 'GET /a HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n';
    assert.deepEqual(await exchange(port, h2c), { status: 'HTTP/1.1 200 OK', body: 'upstream' });
    const unnamed = 'GET /b HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n';
    assert.deepEqual(await exchange(port, unnamed), { status: 'HTTP/1.1 200 OK', body: 'upstream' });
    assert.equal(await proxy.stat(COUNTER), 1);
    assert.deepEqual(upstream.seen.map((seen) => [seen.url, seen.headers.upgrade]), [['/a', undefined], ['/b', undefined]]);
  });
});
