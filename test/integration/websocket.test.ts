// WebSocket through the real binary: upgrade_configs on the connection manager, overridden per
// route either way (Envoy 1.16's table), the upstream's 101 and every frame relayed, the bytes
// counted in the access log, and downstream_cx_upgrades_* as in Envoy.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { type RunningProxy, makeTempDir, startProxy, waitFor } from '../helpers/proxy_process';
import { connectWebSocket, connectWebSocketH2, type EchoServer, startEchoServer } from '../helpers/websocket_peers';

const TIMEOUT = { timeout: 30_000 };
const FILE_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';

/** The first line a raw handshake gets back. */
function statusOf(port: number, requestPath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`GET ${requestPath} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (!received.includes('\r\n')) return;
      socket.destroy();
      resolve(received.slice(0, received.indexOf('\r\n')));
    });
    socket.on('error', reject);
  });
}

describe('WebSocket upgrades', TIMEOUT, () => {
  let echo: EchoServer;
  let proxy: RunningProxy;
  let enabled: number;
  let perRoute: number;
  let h2: number;
  let logDir: string | undefined;
  let logFile: string;

  before(async () => {
    echo = await startEchoServer();
    logDir = makeTempDir();
    logFile = path.join(logDir, 'access.log');
    const accessLog = [{ name: 'proxy.access_loggers.file', typed_config: { '@type': FILE_LOG, path: logFile, log_format: { text_format: '%REQ(:PATH)% %RESPONSE_CODE% %BYTES_RECEIVED% %BYTES_SENT%\n' } } }];
    const ws = { route: { cluster: 'echo' } };
    // The connection manager allows websocket; one route refuses it.
    const managerEnabled = httpListener('enabled', 0, [{ match: { prefix: '/off' }, route: { cluster: 'echo', upgrade_configs: [{ upgrade_type: 'websocket', enabled: false }] } }, { match: { prefix: '/' }, ...ws }], {
      upgrade_configs: [{ upgrade_type: 'websocket' }],
      access_log: accessLog,
    });
    // The connection manager says nothing; one route allows it, in another case.
    const routeEnabled = httpListener('per-route', 0, [{ match: { prefix: '/on' }, route: { cluster: 'echo', upgrade_configs: [{ upgrade_type: 'WebSocket' }] } }, { match: { prefix: '/' }, ...ws }], {
      stat_prefix: 'per_route',
    });
    // WebSocket over HTTP/2 (RFC 8441) where http2_protocol_options.allow_connect is set.
    const overH2 = httpListener('h2', 0, [{ match: { prefix: '/' }, ...ws }], {
      stat_prefix: 'over_h2',
      upgrade_configs: [{ upgrade_type: 'websocket' }],
      http2_protocol_options: { allow_connect: true },
    });
    const listeners = [managerEnabled, routeEnabled, overH2];
    proxy = await startProxy({ static_resources: { listeners, clusters: [localCluster('echo', echo.port)] } }, ['--file-flush-interval-msec', '50']);
    enabled = await proxy.listenerPort('enabled');
    perRoute = await proxy.listenerPort('per-route');
    h2 = await proxy.listenerPort('h2');
  });

  after(async () => {
    await proxy?.cleanup();
    await echo?.close();
    if (logDir !== undefined) fs.rmSync(logDir, { recursive: true, force: true });
  });

  test('frames cross both ways, the upstream sees the upgrade, and the bytes are counted', async () => {
    const client = await connectWebSocket(enabled, '/chat', 'front.example');
    assert.match(client.response, /\r\nupgrade: websocket(\r\n|$)/i);
    assert.match(client.response, /\r\nconnection: upgrade(\r\n|$)/i);
    assert.equal(await proxy.stat('http.ingress_http.downstream_cx_upgrades_active'), 1);
    const messages = ['hello', 'x'.repeat(1000), 'bye'];
    for (const message of messages) {
      client.send(message);
      assert.equal(await client.receive(), message);
    }
    await client.close();
    const handshake = echo.handshakes.at(-1)!;
    assert.equal(handshake.upgrade, 'websocket');
    assert.equal(String(handshake.connection).toLowerCase(), 'upgrade');
    assert.equal(handshake.host, 'front.example');
    await waitFor('the upgraded stream to end', async () => ((await proxy.stat('http.ingress_http.downstream_cx_upgrades_active')) === 0 ? true : undefined));
    assert.equal(await proxy.stat('http.ingress_http.downstream_cx_upgrades_total'), 1);
    const line = await waitFor('the access log line', () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n')[0] || undefined : undefined));
    assert.equal(line, `/chat 101 ${client.sentBytes} ${client.receivedBytes}`);
  });

  test('a route that disables the upgrade, and one no configuration allows, answer 403', async () => {
    assert.equal(await statusOf(enabled, '/off'), 'HTTP/1.1 403 Forbidden');
    assert.equal(await proxy.stat('http.ingress_http.downstream_rq_ws_on_non_ws_route'), 1);
    assert.equal(await statusOf(perRoute, '/elsewhere'), 'HTTP/1.1 403 Forbidden');
    assert.equal(await proxy.stat('http.per_route.downstream_rq_ws_on_non_ws_route'), 1);
  });

  test('a route can allow an upgrade the connection manager does not name, in any case', async () => {
    const client = await connectWebSocket(perRoute, '/on', 'front.example');
    client.send('routed');
    assert.equal(await client.receive(), 'routed');
    await client.close();
    assert.equal(await proxy.stat('http.per_route.downstream_cx_upgrades_total'), 1);
  });

  test('over HTTP/2 (an extended CONNECT, allow_connect): the same echo through the HTTP/1 upstream', async () => {
    const client = await connectWebSocketH2(h2, '/chat', 'front.example');
    try {
      for (const message of ['over', 'h2']) {
        client.send(message);
        assert.equal(await client.receive(), message);
      }
      // The upstream got an HTTP/1.1 upgrade, as from an HTTP/1 client.
      const handshake = echo.handshakes.at(-1)!;
      assert.deepEqual([handshake.upgrade, String(handshake.connection).toLowerCase(), handshake.host], ['websocket', 'upgrade', 'front.example']);
      assert.equal(await proxy.stat('http.over_h2.downstream_cx_upgrades_total'), 1);
      await client.close();
    } finally {
      client.session.destroy();
    }
    await waitFor('the upgraded stream to end', async () => ((await proxy.stat('http.over_h2.downstream_cx_upgrades_active')) === 0 ? true : undefined));
  });
});
