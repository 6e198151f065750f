// A TCP port on 127.0.0.1 that refuses connections for as long as a test needs it. A port bound
// and released does not stay refused: another test's bind to port 0 can take it in between, and
// a proxy meant to see ECONNREFUSED then waits on a peer that never answers. The kernel hands out
// ports of its ephemeral range only, to bind(0) and connect() alike, and the tests take ports
// below it only at random under the top 1,024 (bench/free_port.ts): a port just below the range
// that refuses now keeps refusing.

import * as net from 'node:net';
import { ephemeralRangeStart } from '../../bench/free_port';

/** The first port below the ephemeral range that nothing on 127.0.0.1 listens on. */
export async function refusedPort(): Promise<number> {
  const low = ephemeralRangeStart();
  for (let port = low - 1; port > 1024; port--) if (await refuses(port)) return port;
  throw new Error(`no port below ${low} refuses connections on 127.0.0.1`);
}

/** Whether a connection to `port` on 127.0.0.1 is refused now (nothing listens there). */
export function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}
