// The TLS inspector's ClientHello parser: real ClientHellos (Node's TLS client, with and without
// SNI and ALPN, captured once per run), mutated, cut short, or split over several records.
// Every input gets a verdict and nothing is thrown; a prefix of an intact ClientHello is always
// "need more", never "not TLS" (else a slow client would be misrouted).

import * as net from 'node:net';
import * as tls from 'node:tls';
import { parseClientHello } from '../../src/listener/client_hello';
import type { FuzzInput, FuzzSurface } from './driver';
import { below, mutateBytes, pick, type Random } from './mutators';

export const tlsClientHello: FuzzSurface = {
  name: 'tls_client_hello',
  timeBoundMs: 2000,
  async open() {
    const hellos = [
      await capturedClientHello({ servername: 'www.example.com', ALPNProtocols: ['h2', 'http/1.1'] }),
      await capturedClientHello({ ALPNProtocols: ['http/1.1'] }),
      await capturedClientHello({ servername: 'a'.repeat(200) + '.example.com', maxVersion: 'TLSv1.2' }),
    ];
    return {
      generate(random: Random): FuzzInput {
        const hello = pick(random, hellos);
        switch (below(random, 4)) {
          case 0:
            return { kind: 'prefix', bytes: hello.subarray(0, below(random, hello.length)) };
          case 1:
            return { kind: 'bin', bytes: mutateBytes(random, resplit(random, hello), 8) };
          case 2:
            return { kind: 'split', bytes: resplit(random, hello) };
          default:
            return { kind: 'bin', bytes: mutateBytes(random, hello, 8) };
        }
      },
      run(input: FuzzInput): void {
        const result = parseClientHello(input.bytes);
        if (input.kind === 'prefix' && result.kind !== 'need_more') throw new Error(`a prefix of ${input.bytes.length} bytes gave ${result.kind}`);
        if (input.kind === 'split' && result.kind !== 'client_hello') throw new Error(`a ClientHello split over records gave ${result.kind}`);
      },
      async close() {},
    };
  },
};

/** The first flight of a Node TLS client: its ClientHello record(s). */
async function capturedClientHello(options: tls.ConnectionOptions): Promise<Buffer> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  try {
    const captured = new Promise<Buffer>((resolve) => server.once('connection', (socket) => socket.once('data', (data: Buffer) => {
      socket.destroy();
      resolve(data);
    })));
    const client = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...options });
    client.on('error', () => {});
    const bytes = await captured;
    client.destroy();
    return bytes;
  } finally {
    server.close();
  }
}

/** The handshake of `hello`'s one record split over several records at random points, as TLS allows. */
function resplit(random: Random, hello: Buffer): Buffer {
  const handshake = hello.subarray(5, 5 + hello.readUInt16BE(3));
  const records: Buffer[] = [];
  for (let at = 0; at < handshake.length;) {
    const size = Math.min(handshake.length - at, 1 + below(random, 300));
    const header = Buffer.from([0x16, 3, 1, 0, 0]);
    header.writeUInt16BE(size, 3);
    records.push(header, handshake.subarray(at, at + size));
    at += size;
  }
  return Buffer.concat(records);
}
