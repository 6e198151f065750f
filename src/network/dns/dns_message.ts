// Building a query and judging a response to it. Pure: the transports hand every datagram or TCP
// frame here, and anything that is not the answer to this very question is ignored, so a stray
// or forged packet cannot complete the lookup. The answer to it, though, must be well formed:
// one that is not ends the lookup as c-ares's EBADRESP does, and never yields an address.

import * as dnsPacket from 'dns-packet';

import { type AnswerRecord, CLASS_IN, DnsFormatError, readAnswers, readResponseHead, RECORD_TYPE_CODE, type ResponseHead } from './dns_response';

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
  | { readonly kind: 'server-error'; readonly rcode: string }
  /** The answer to the query, but broken: cut short, or a record that does not add up. */
  | { readonly kind: 'malformed'; readonly reason: string };

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
function addressesOf(answers: readonly AnswerRecord[], name: string, type: AddressRecordType): DnsAddress[] {
  const chainTtl = new Map<string, number>([[canonicalName(name), Infinity]]);
  // A chain is at most as long as the answer section; more passes could only loop.
  for (let pass = 0; pass < answers.length; pass++) {
    let grew = false;
    for (const record of answers) {
      if (record.type !== 'CNAME') continue;
      const ownerTtl = chainTtl.get(canonicalName(record.name));
      const target = canonicalName(record.target);
      if (ownerTtl === undefined || chainTtl.has(target)) continue;
      chainTtl.set(target, Math.min(ownerTtl, record.ttlSeconds));
      grew = true;
    }
    if (!grew) break;
  }
  const addresses: DnsAddress[] = [];
  for (const record of answers) {
    if (record.type !== type) continue;
    const aliasTtl = chainTtl.get(canonicalName(record.name));
    if (aliasTtl === undefined) continue;
    addresses.push({ address: record.address, ttlSeconds: Math.min(aliasTtl, record.ttlSeconds) });
  }
  return addresses;
}

/**
 * What a received message says about the query (`id`, `name`, `type`), or null when it is not a
 * response to that query (wrong id, question or not a response at all) or its header and
 * question cannot be read. Over TCP the truncation bit is meaningless and ignored.
 */
export function judgeResponse(message: Buffer, id: number, name: string, type: AddressRecordType, overTcp: boolean): DnsVerdict | null {
  let head: ResponseHead;
  try {
    head = readResponseHead(message);
  } catch (error) {
    if (error instanceof DnsFormatError) return null;
    throw error;
  }
  if (!head.isResponse || head.id !== id) return null;
  const { question } = head;
  if (question.type !== RECORD_TYPE_CODE[type] || question.class !== CLASS_IN || canonicalName(question.name) !== canonicalName(name)) return null;
  // As c-ares: the answer section of a truncated answer is not read, but asked again over TCP.
  if (head.truncated && !overTcp) return { kind: 'truncated' };
  // NXDOMAIN: the name does not exist, a definite answer with no addresses.
  if (head.rcode === 'NXDOMAIN') return { kind: 'addresses', addresses: [] };
  if (head.rcode !== 'NOERROR') return { kind: 'server-error', rcode: head.rcode };
  try {
    return { kind: 'addresses', addresses: addressesOf(readAnswers(message, head), name, type) };
  } catch (error) {
    if (error instanceof DnsFormatError) return { kind: 'malformed', reason: error.message };
    throw error;
  }
}
