// Building a query and judging a response to it. Pure: the transports hand every datagram or TCP
// frame here, and anything that is not the answer to this very question is ignored, so a stray
// or forged packet cannot complete the lookup.

import * as dnsPacket from 'dns-packet';

export type AddressRecordType = 'A' | 'AAAA';

/** A resolved address and how long, in seconds, the answer may be cached. */
export interface DnsAddress {
  readonly address: string;
  readonly ttlSeconds: number;
}

export type DnsVerdict =
  | { readonly kind: 'addresses'; readonly addresses: readonly DnsAddress[] }
  /** UDP answer cut short: ask again over TCP. */
  | { readonly kind: 'truncated' }
  | { readonly kind: 'server-error'; readonly rcode: string };

/** Lower case without the root dot, the form names are compared in. */
export function canonicalName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

export function encodeQuery(id: number, name: string, type: AddressRecordType): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type, name: canonicalName(name), class: 'IN' }],
  });
}

/**
 * The records of `type` that answer `name`, following the CNAME chain within the answer section
 * (each address's TTL is capped by the aliases it was reached through).
 */
function addressesOf(answers: readonly dnsPacket.Answer[], name: string, type: AddressRecordType): DnsAddress[] {
  const chainTtl = new Map<string, number>([[canonicalName(name), Infinity]]);
  // A chain is at most as long as the answer section; more passes could only loop.
  for (let pass = 0; pass < answers.length; pass++) {
    let grew = false;
    for (const record of answers) {
      if (record.type !== 'CNAME') continue;
      const ownerTtl = chainTtl.get(canonicalName(record.name));
      const target = canonicalName(record.data);
      if (ownerTtl === undefined || chainTtl.has(target)) continue;
      chainTtl.set(target, Math.min(ownerTtl, record.ttl ?? 0));
      grew = true;
    }
    if (!grew) break;
  }
  const addresses: DnsAddress[] = [];
  for (const record of answers) {
    if (record.type !== type) continue;
    const aliasTtl = chainTtl.get(canonicalName(record.name));
    if (aliasTtl === undefined) continue;
    addresses.push({ address: record.data, ttlSeconds: Math.min(aliasTtl, record.ttl ?? 0) });
  }
  return addresses;
}

/**
 * What a received message says about the query (`id`, `name`, `type`), or null when it is not a
 * response to that query (wrong id, question or not a response at all) or cannot be decoded.
 * Over TCP the truncation bit is meaningless and ignored.
 */
export function judgeResponse(message: Buffer, id: number, name: string, type: AddressRecordType, overTcp: boolean): DnsVerdict | null {
  let packet: dnsPacket.DecodedPacket;
  try {
    packet = dnsPacket.decode(message);
  } catch {
    return null;
  }
  const question = packet.questions?.[0];
  if (!packet.flag_qr || packet.id !== id || packet.questions?.length !== 1 || question === undefined) return null;
  if (question.type !== type || canonicalName(question.name) !== canonicalName(name) || (question.class ?? 'IN') !== 'IN') return null;
  if (packet.flag_tc && !overTcp) return { kind: 'truncated' };
  const rcode = (packet as { rcode?: string }).rcode ?? 'NOERROR';
  // NXDOMAIN: the name does not exist, a definite answer with no addresses.
  if (rcode === 'NXDOMAIN') return { kind: 'addresses', addresses: [] };
  if (rcode !== 'NOERROR') return { kind: 'server-error', rcode };
  return { kind: 'addresses', addresses: addressesOf(packet.answers ?? [], name, type) };
}
