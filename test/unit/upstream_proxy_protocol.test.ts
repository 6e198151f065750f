// The upstream PROXY protocol socket's header on real loopback connections: the downstream
// connection's addresses, or, for the proxy's own connections (health checks), Envoy's V1 header
// naming the connection itself and its V2 LOCAL header.

import assert from 'node:assert/strict';
import * as net from 'node:net';
import { test, type TestContext } from 'node:test';
import { upstreamProxyProtocol } from '../../src/network/upstream_proxy_protocol';
import type { DownstreamAddresses } from '../../src/network/downstream_addresses';
import { tcpUpstream } from '../helpers/http_peers';

const TIMEOUT = { timeout: 10_000 };

/** The first `length` bytes an upstream receives on the connection `version`'s socket opens, and that socket. */
async function firstBytes(t: TestContext, version: 'V1' | 'V2', downstream: DownstreamAddresses | undefined, length: number): Promise<{ bytes: Buffer; socket: net.Socket }> {
  let received = Buffer.alloc(0);
  let done: (bytes: Buffer) => void = () => undefined;
  const bytes = new Promise<Buffer>((resolve) => (done = resolve));
  const port = await tcpUpstream(t, (s) =>
    s.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= length) done(received);
    }),
  );
  const socket = upstreamProxyProtocol(version)({ host: '127.0.0.1', port, allowHalfOpen: false, downstream });
  t.after(() => socket.destroy());
  socket.once('connect', () => socket.write('x'));
  return { bytes: await bytes, socket };
}

test('V1 names the downstream connection, before the first byte of traffic', TIMEOUT, async (t) => {
  const downstream = { remoteAddress: '10.1.2.3', remotePort: 5555, localAddress: '10.9.8.7', localPort: 443 };
  const expected = 'PROXY TCP4 10.1.2.3 10.9.8.7 5555 443\r\nx';
  const { bytes } = await firstBytes(t, 'V1', downstream, expected.length);
  assert.equal(bytes.toString('latin1'), expected);
});

test("without a downstream connection V1 names the upstream connection's own addresses", TIMEOUT, async (t) => {
  const { bytes, socket } = await firstBytes(t, 'V1', undefined, 30);
  const line = bytes.toString('latin1');
  assert.equal(line.slice(0, line.indexOf('\r\n')), `PROXY TCP4 127.0.0.1 127.0.0.1 ${socket.localPort} ${socket.remotePort}`);
});

test('without a downstream connection V2 is a LOCAL header', TIMEOUT, async (t) => {
  const { bytes } = await firstBytes(t, 'V2', undefined, 17);
  assert.equal(bytes.toString('hex'), '0d0a0d0a000d0a515549540a' + '20000000' + Buffer.from('x').toString('hex'));
});
