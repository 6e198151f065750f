// The PROXY protocol header (HAProxy's proxy-protocol.txt, versions 1 and 2) that tells an
// upstream who the client really is: the downstream connection's source and destination.

import * as net from 'node:net';

/** Where a connection came from and went to; null fields when not an IP connection. */
export interface ProxiedAddresses {
  readonly sourceAddress: string | undefined;
  readonly sourcePort: number | undefined;
  readonly destinationAddress: string | undefined;
  readonly destinationPort: number | undefined;
}

const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
const V2_PROXY = 0x21;
const V2_LOCAL = 0x20;
const V2_TCP4 = 0x11;
const V2_TCP6 = 0x21;

/** 4 for two IPv4 addresses, 6 for two IPv6 ones, 0 when the pair has no common IP family. */
function familyOf(a: ProxiedAddresses): 0 | 4 | 6 {
  if (a.sourcePort === undefined || a.destinationPort === undefined) return 0;
  const source = net.isIP(a.sourceAddress ?? '');
  const destination = net.isIP(a.destinationAddress ?? '');
  return source === destination && source !== 0 ? (source as 4 | 6) : 0;
}

export function proxyProtocolV1(a: ProxiedAddresses): Buffer {
  const family = familyOf(a);
  if (family === 0) return Buffer.from('PROXY UNKNOWN\r\n', 'latin1');
  const line = `PROXY TCP${family} ${a.sourceAddress} ${a.destinationAddress} ${a.sourcePort} ${a.destinationPort}\r\n`;
  return Buffer.from(line, 'latin1');
}

export function proxyProtocolV2(a: ProxiedAddresses): Buffer {
  const family = familyOf(a);
  if (family === 0) return Buffer.concat([V2_SIGNATURE, Buffer.from([V2_LOCAL, 0x00, 0x00, 0x00])]);
  const addressBytes = family === 4 ? 4 : 16;
  const body = Buffer.alloc(addressBytes * 2 + 4);
  ipBytes(a.sourceAddress!, family).copy(body, 0);
  ipBytes(a.destinationAddress!, family).copy(body, addressBytes);
  body.writeUInt16BE(a.sourcePort!, addressBytes * 2);
  body.writeUInt16BE(a.destinationPort!, addressBytes * 2 + 2);
  const head = Buffer.from([V2_PROXY, family === 4 ? V2_TCP4 : V2_TCP6, 0, 0]);
  head.writeUInt16BE(body.length, 2);
  return Buffer.concat([V2_SIGNATURE, head, body]);
}

/** The network-order bytes of a valid IPv4 or IPv6 address. */
export function ipBytes(ip: string, family: 4 | 6): Buffer {
  if (family === 4) return Buffer.from(ip.split('.').map(Number));
  const out = Buffer.alloc(16);
  // A trailing dotted quad (::ffff:1.2.3.4) stands for the last two groups.
  let text = ip;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    const quad = ipBytes(text.slice(lastColon + 1), 4);
    text = `${text.slice(0, lastColon + 1)}${quad.readUInt16BE(0).toString(16)}:${quad.readUInt16BE(2).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const groups = (s: string | undefined): number[] => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const front = groups(head);
  const back = groups(tail);
  front.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  back.forEach((g, i) => out.writeUInt16BE(g, (8 - back.length + i) * 2));
  return out;
}
