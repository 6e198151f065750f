// Our proxy's bootstrap needs fixed ports (admin included), so ports are picked up front. A port
// of the kernel's ephemeral range, bound and released, can go to another program's bind to port 0
// before ours binds it. The kernel hands out no port below that range, to bind(0) or connect(): a
// port found free there stays free unless a program names it. So ports are taken there at random,
// each checked free on 127.0.0.1, leaving the top 1,024 to ports that must refuse connections
// (the tests' refusedPort).

import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Below it are the well-known services' own ports. */
const LOWEST_PORT = 10_000;
/** The ports just below the ephemeral range that freePort() and lowPort() leave alone. */
const REFUSED_PORTS = 1024;

/** The first port of the kernel's ephemeral range (ip_local_port_range). */
export function ephemeralRangeStart(): number {
  return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
}

/** A port below the ephemeral range, at random: the caller checks that it is free. */
export function lowPort(): number {
  const top = ephemeralRangeStart() - REFUSED_PORTS;
  return LOWEST_PORT + Math.floor(Math.random() * (top - LOWEST_PORT));
}

/** A TCP port below the ephemeral range that nothing on 127.0.0.1 holds now. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = lowPort();
    if (await bindable(port)) return port;
  }
  throw new Error('no free port below the ephemeral range on 127.0.0.1 in 50 tries');
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
