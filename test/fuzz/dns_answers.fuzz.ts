// DNS answers: responses to one query (CNAME chains, A and AAAA records, compressed names)
// built with dns-packet, then mutated in their bytes, as a resolver's transports hand them to
// judgeResponse. Each is judged (addresses, truncated, a server error, malformed, or not ours)
// and nothing is thrown; an address given is one of the record's own form.

import * as net from 'node:net';
import * as dnsPacket from 'dns-packet';
import { type AddressRecordType, judgeResponse } from '../../src/network/dns/dns_message';
import type { FuzzInput, FuzzSurface } from './driver';
import { below, mutateBytes, pick, type Random } from './mutators';

const ID = 0x1234;
const NAME = 'svc.example.com';

export const dnsAnswers: FuzzSurface = {
  name: 'dns_answers',
  timeBoundMs: 2000,
  async open() {
    return {
      generate(random: Random): FuzzInput {
        const type: AddressRecordType = random() < 0.5 ? 'A' : 'AAAA';
        const response = Buffer.from(dnsPacket.encode(responseTo(random, type)));
        const bytes = random() < 0.85 ? mutateBytes(random, response, 6) : response;
        // The kind carries the query type and the transport, for a corpus input to be judged as it was.
        return { kind: `${type.toLowerCase()}${random() < 0.3 ? '_tcp' : ''}`, bytes };
      },
      run(input: FuzzInput): void {
        const type: AddressRecordType = input.kind.startsWith('aaaa') ? 'AAAA' : 'A';
        const verdict = judgeResponse(input.bytes, ID, NAME, type, input.kind.endsWith('_tcp'));
        if (verdict?.kind !== 'addresses') return;
        for (const { address, ttlSeconds } of verdict.addresses) {
          if (net.isIP(address) !== (type === 'A' ? 4 : 6)) throw new Error(`an ${type} answer gave the address ${address}`);
          if (!Number.isInteger(ttlSeconds) || ttlSeconds < 0) throw new Error(`a TTL of ${ttlSeconds}`);
        }
      },
      async close() {},
    };
  },
};

function responseTo(random: Random, type: AddressRecordType): dnsPacket.Packet {
  const answers: dnsPacket.Answer[] = [];
  let name = NAME;
  for (let i = below(random, 4); i > 0; i--) {
    const alias = `alias${i}.${pick(random, ['example.com', 'example.net', NAME])}`;
    answers.push({ type: 'CNAME', name, ttl: below(random, 3600), data: alias });
    name = alias;
  }
  for (let i = below(random, 5); i > 0; i--) {
    const aaaa = random() < (type === 'AAAA' ? 0.8 : 0.2);
    answers.push(
      aaaa
        ? { type: 'AAAA', name: random() < 0.8 ? name : 'other.example.com', ttl: below(random, 2 ** 31), data: `2001:db8::${below(random, 0xffff).toString(16)}` }
        : { type: 'A', name: random() < 0.8 ? name : 'other.example.com', ttl: below(random, 2 ** 31), data: `10.0.${below(random, 256)}.${below(random, 256)}` },
    );
  }
  return {
    type: 'response',
    id: random() < 0.95 ? ID : below(random, 65536),
    flags: (random() < 0.1 ? dnsPacket.TRUNCATED_RESPONSE : 0) | dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    rcode: random() < 0.1 ? pick(random, ['NXDOMAIN', 'SERVFAIL', 'REFUSED']) : 'NOERROR',
    questions: [{ type, name: random() < 0.9 ? NAME : NAME.toUpperCase(), class: 'IN' }],
    answers,
    authorities: random() < 0.2 ? [{ type: 'NS', name: 'example.com', ttl: 60, data: 'ns.example.com' }] : [],
  } as dnsPacket.Packet;
}
