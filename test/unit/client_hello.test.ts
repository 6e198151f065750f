// The TLS inspector's parser on real ClientHellos (captured from node:tls) and on bytes that
// are not one: truncated at every length, split over records, garbage, oversized.

import assert from 'node:assert/strict';
import * as net from 'node:net';
import { test } from 'node:test';
import * as tls from 'node:tls';
import { MAX_CLIENT_HELLO_BYTES, parseClientHello } from '../../src/listener/client_hello';

/** The first bytes a TLS client sends: its ClientHello, in one record. */
async function captureClientHello(options: tls.ConnectionOptions): Promise<Buffer> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const received = new Promise<Buffer>((resolve) => server.once('connection', (socket) => socket.once('data', (data: Buffer) => { resolve(data); socket.destroy(); })));
    const client = tls.connect({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port, ...options });
    client.on('error', () => undefined);
    const data = await received;
    client.destroy();
    return data;
  } finally {
    server.close();
  }
}

test('SNI and ALPN of a real ClientHello', async () => {
  const hello = await captureClientHello({ servername: 'WWW.Example.com', ALPNProtocols: ['h2', 'http/1.1'] });
  assert.deepEqual(parseClientHello(hello), { kind: 'client_hello', serverName: 'www.example.com', alpn: ['h2', 'http/1.1'] });
  const bare = await captureClientHello({});
  assert.deepEqual(parseClientHello(bare), { kind: 'client_hello', serverName: '', alpn: [] });
});

test('every truncation of a ClientHello asks for more bytes', async () => {
  const hello = await captureClientHello({ servername: 'a.example', ALPNProtocols: ['h2'] });
  for (let n = 0; n < hello.length; n++) assert.deepEqual(parseClientHello(hello.subarray(0, n)), { kind: 'need_more' }, `at ${n} bytes`);
});

test('a ClientHello split over two records is reassembled', async () => {
  const hello = await captureClientHello({ servername: 'split.example' });
  const body = hello.subarray(5);
  const record = (part: Buffer) => Buffer.concat([Buffer.from([0x16, 3, 1, part.length >> 8, part.length & 0xff]), part]);
  const split = Buffer.concat([record(body.subarray(0, 40)), record(body.subarray(40))]);
  assert.deepEqual(parseClientHello(split), { kind: 'client_hello', serverName: 'split.example', alpn: [] });
  assert.deepEqual(parseClientHello(split.subarray(0, 50)), { kind: 'need_more' });
});

test('bytes that are not a ClientHello', async () => {
  assert.deepEqual(parseClientHello(Buffer.from('GET / HTTP/1.1\r\n\r\n')), { kind: 'not_tls' });
  assert.deepEqual(parseClientHello(Buffer.from('G')), { kind: 'not_tls' });
  // A handshake record of another message type (ServerHello).
  assert.deepEqual(parseClientHello(Buffer.from([0x16, 3, 1, 0, 4, 2, 0, 0, 0])), { kind: 'not_tls' });
  // A ClientHello whose extensions overrun their length.
  const hello = await captureClientHello({ servername: 'x.example' });
  const broken = Buffer.from(hello);
  broken.writeUInt16BE(broken.readUInt16BE(5 + 4 + 34 + 1 + broken[5 + 4 + 34]) + 1000, 5 + 4 + 34 + 1 + broken[5 + 4 + 34]);
  assert.deepEqual(parseClientHello(broken), { kind: 'not_tls' });
  for (let seed = 1; seed < 200; seed++) {
    const garbage = Buffer.from(Array.from({ length: 64 }, (_, i) => (seed * 31 + i * 17) & 0xff));
    garbage[0] = 0x16;
    garbage[1] = 3;
    assert.doesNotThrow(() => parseClientHello(garbage));
  }
});

test('a ClientHello over 64 KiB is too large', () => {
  const length = MAX_CLIENT_HELLO_BYTES;
  const head = Buffer.from([0x16, 3, 1, 0x40, 0, 1, (length >> 16) & 0xff, (length >> 8) & 0xff, length & 0xff]);
  assert.deepEqual(parseClientHello(head), { kind: 'too_large' });
});
