// Envoy's `asString()` of a socket address: `1.2.3.4:80`, `[::1]:80`. It keys per-host stats
// and /clusters lines, so every module formats addresses through this one function.

import * as net from 'node:net';
import type { SocketAddress } from '../config/model';

export function addressString(a: SocketAddress): string {
  return net.isIPv6(a.address) ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
}
