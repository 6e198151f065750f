// The server's local address (Envoy's Network::Utility::getLocalAddress): the first
// non-loopback address of the --local-address-ip-version family among the host's interfaces,
// else that family's loopback address.

import type { NetworkInterfaceInfo } from 'node:os';
import type { IpVersion } from './options';

const LOOPBACK: Readonly<Record<IpVersion, string>> = { v4: '127.0.0.1', v6: '::1' };
const FAMILY: Readonly<Record<IpVersion, NetworkInterfaceInfo['family']>> = { v4: 'IPv4', v6: 'IPv6' };

/** @param interfaces as os.networkInterfaces() lists them, in the kernel's (getifaddrs) order */
export function localAddress(interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>, version: IpVersion): string {
  for (const addresses of Object.values(interfaces)) {
    for (const info of addresses ?? []) {
      if (info.family === FAMILY[version] && !info.internal && !isLoopback(info.address)) return info.address;
    }
  }
  return LOOPBACK[version];
}

function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.');
}
