import assert from 'node:assert/strict';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort } from '../../bench/free_port';
import { waitUntilServing } from '../../bench/http_probe';
import { ProcessGroups } from '../../bench/process_group';

const SCRIPT = join(__dirname, '..', '..', 'bench', 'node_http_proxy.js');

function get(port: number, agent: Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/', agent }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

test('node-http-proxy forwards over reused upstream connections and answers 502 without upstream', { timeout: 20000 }, async () => {
  let upstreamConnections = 0;
  const upstream = createServer((_req, res) => res.end('Hello, World!'));
  upstream.on('connection', () => upstreamConnections++);
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const upstreamPort = (upstream.address() as AddressInfo).port;
  const processes = new ProcessGroups();
  const client = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const port = await freePort();
    const proxy = processes.spawn('node-http-proxy', process.execPath, [SCRIPT, String(port), String(upstreamPort)]);
    await waitUntilServing(proxy, { port, path: '/', expectedBody: 'Hello, World!' }, 10000);
    const connectionsBefore = upstreamConnections;
    for (let i = 0; i < 20; i++) {
      assert.deepEqual(await get(port, client), { status: 200, body: 'Hello, World!' });
    }
    // Sequential requests over one client connection need one upstream connection at most.
    assert.ok(upstreamConnections - connectionsBefore <= 1, `${upstreamConnections - connectionsBefore} upstream connections`);

    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
    assert.equal((await get(port, client)).status, 502);
  } finally {
    client.destroy();
    upstream.close();
    await processes.stopAll();
  }
});
