// Envoy's `asString()` of a socket address: `1.2.3.4:80`, `[::1]:80`. It keys per-host stats
// and /clusters lines, so every module formats addresses through this one function.

import * as net from 'node:net';
import type { SocketAddress } from '../config/model';

export function addressString(a: SocketAddress): string {
  // Only an address with a colon can be IPv6: IPv4 and names skip isIPv6's regex, which was
  // nearly all of the time spent keying the hosts of a 10,000-cluster start.
  return a.address.includes(':') && net.isIPv6(a.address) ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
}

/**
 * Envoy's parseInternetAddressAndPort: `1.2.3.4:80` or `[::1]:80`, an IP literal (no name) and a
 * decimal port up to 65535; null for anything else.
 */
export function parseIpAndPort(text: string): SocketAddress | null {
  const colon = text.lastIndexOf(':');
  if (colon < 0) return null;
  const portText = text.slice(colon + 1);
  const port = Number(portText);
  if (!/^[0-9]{1,5}$/.test(portText) || port > 65535) return null;
  const host = text.slice(0, colon);
  if (host.startsWith('[') && host.endsWith(']')) {
    const address = host.slice(1, -1);
    return net.isIPv6(address) ? { address, port } : null;
  }
  return net.isIPv4(host) ? { address: host, port } : null;
}
