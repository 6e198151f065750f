// Our proxy's bootstrap needs fixed ports (admin included), so ports are picked up front: bind
// port 0, read the port the kernel chose, release it. Another program could take it in between;
// on a loopback benchmark that race is rare and shows up as a failed start, not a wrong number.

import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port bound'))));
    });
  });
}
