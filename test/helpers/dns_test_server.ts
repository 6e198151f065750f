// A small authoritative DNS server on 127.0.0.1 for tests: UDP and TCP on one port, answers
// from a mutable table (well formed, or broken on purpose), and a log of every query with the
// transport it came over.

import * as dgram from 'node:dgram';
import * as net from 'node:net';
import { after, before, beforeEach } from 'node:test';
import * as dnsPacket from 'dns-packet';
import { lowPort } from '../../bench/free_port';
import { refusedPort } from './refused_port';

export interface AddressRecord {
  readonly address: string;
  readonly ttl: number;
}

export interface ZoneEntry {
  a?: AddressRecord[];
  aaaa?: AddressRecord[];
  cname?: { readonly target: string; readonly ttl: number };
  /** Answer every query for the name with this code and no records. */
  rcode?: 'SERVFAIL' | 'REFUSED';
  /** Never answer (the client times out). */
  silent?: boolean;
  /** Keep the answers until release() is called. */
  hold?: boolean;
  /** Over UDP, answer with the TC bit and no records. */
  truncateUdp?: boolean;
  /** Before the real answer, send ones with a wrong id and a wrong question, carrying 6.6.6.6. */
  forgeFirst?: boolean;
  /** Over TCP, close the connection instead of answering. */
  dropTcp?: boolean;
  /** Drop this many bytes from the end of the answer: a message cut short, without the TC bit. */
  cutBytes?: number;
  /** Address records carry this many bytes of data (the address cut, or padded with zeros) and declare that length. */
  addressLength?: number;
}

export interface LoggedQuery {
  readonly name: string;
  readonly type: string;
  readonly transport: 'udp' | 'tcp';
}

export class DnsTestServer {
  /** Names absent from the zone are NXDOMAIN. */
  readonly zone = new Map<string, ZoneEntry>();
  readonly queries: LoggedQuery[] = [];
  private readonly tcpSockets = new Set<net.Socket>();
  private held: (() => void)[] = [];

  private constructor(
    private readonly udp: dgram.Socket,
    private readonly tcp: net.Server,
    readonly port: number,
  ) {
    udp.on('message', (message, from) => {
      this.answer(message, 'udp', (reply) => udp.send(reply, from.port, from.address), () => {});
    });
    tcp.on('connection', (socket) => {
      this.tcpSockets.add(socket);
      socket.on('close', () => this.tcpSockets.delete(socket));
      socket.on('error', () => {});
      let pending = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
          const message = pending.subarray(2, 2 + pending.readUInt16BE(0));
          pending = pending.subarray(2 + message.length);
          this.answer(message, 'tcp', (reply) => {
            const length = Buffer.alloc(2);
            length.writeUInt16BE(reply.length, 0);
            if (!socket.destroyed) socket.write(Buffer.concat([length, reply]));
          }, () => socket.destroy());
        }
      });
    });
  }

  /**
   * Binds UDP, then TCP, on one port below the ephemeral range, taken at random (again if either
   * finds it in use; bench/free_port.ts). Closed, the server's port then refuses queries; a port
   * of the range could meanwhile become some UDP socket's source port, which drops them instead.
   */
  static async start(): Promise<DnsTestServer> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = lowPort();
      const udp = dgram.createSocket('udp4');
      const bound = await new Promise<boolean>((resolve) => {
        udp.once('error', () => resolve(false));
        udp.bind(port, '127.0.0.1', () => resolve(true));
      });
      if (!bound) {
        udp.close();
        continue;
      }
      const tcp = net.createServer();
      const listening = await new Promise<boolean>((resolve) => {
        tcp.once('error', () => resolve(false));
        tcp.listen(port, '127.0.0.1', () => resolve(true));
      });
      if (listening) return new DnsTestServer(udp, tcp, port);
      udp.close();
    }
    throw new Error('no port free for both UDP and TCP');
  }

  get address(): { address: string; port: number } {
    return { address: '127.0.0.1', port: this.port };
  }

  /** How many queries the server has received, optionally only for one name. */
  count(name?: string): number {
    return this.queries.filter((query) => name === undefined || query.name === name).length;
  }

  /** Sends the answers held so far; returns how many queries they answer. */
  release(): number {
    const held = this.held;
    this.held = [];
    for (const send of held) send();
    return held.length;
  }

  async close(): Promise<void> {
    for (const socket of this.tcpSockets) socket.destroy();
    await Promise.all([new Promise<void>((resolve) => this.udp.close(() => resolve())), new Promise<void>((resolve) => this.tcp.close(() => resolve()))]);
  }

  /** Sends the replies to `message`, or calls `hangUp` when the zone says to answer with none over TCP. */
  private answer(message: Buffer, transport: 'udp' | 'tcp', send: (reply: Buffer) => void, hangUp: () => void): void {
    const name = dnsPacket.decode(message).questions?.[0]?.name.toLowerCase();
    const replies = this.reply(message, transport);
    if (replies === null) return hangUp();
    const sendAll = () => replies.forEach(send);
    if (name !== undefined && this.zone.get(name)?.hold) this.held.push(sendAll);
    else sendAll();
  }

  /** The messages that answer `message`; null to close a TCP connection without one. */
  private reply(message: Buffer, transport: 'udp' | 'tcp'): Buffer[] | null {
    const query = dnsPacket.decode(message);
    const question = query.questions?.[0];
    if (question === undefined) return [];
    const name = question.name.toLowerCase();
    this.queries.push({ name, type: question.type, transport });
    const entry = this.zone.get(name);
    if (entry?.silent) return [];
    if (entry?.dropTcp && transport === 'tcp') return null;
    const response = (answers: dnsPacket.Answer[], rcode: string, truncated = false, id = query.id, questionName = question.name): Buffer => {
      const flags = dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (truncated ? dnsPacket.TRUNCATED_RESPONSE : 0);
      const packet = dnsPacket.encode({ type: 'response', id, flags, questions: [{ ...question, name: questionName }], answers });
      // dns-packet's encoder has no rcode field: it lives in the low four bits of the flags.
      const codes: Record<string, number> = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 };
      packet.writeUInt16BE(packet.readUInt16BE(2) | codes[rcode]!, 2);
      return packet;
    };
    if (entry === undefined) return [response([], 'NXDOMAIN')];
    if (entry.rcode !== undefined) return [response([], entry.rcode)];
    if (entry.truncateUdp && transport === 'udp') return [response([], 'NOERROR', true)];
    const answers = this.answers(name, question.type).map((record) => (entry.addressLength === undefined ? record : resizedAddress(record, entry.addressLength)));
    const answer = response(answers, 'NOERROR');
    const replies = [answer.subarray(0, answer.length - (entry.cutBytes ?? 0))];
    if (entry.forgeFirst) {
      const bogus: dnsPacket.Answer[] = [{ type: 'A', name: question.name, ttl: 60, data: '6.6.6.6' }];
      replies.unshift(response(bogus, 'NOERROR', false, (query.id! + 1) & 0xffff), response(bogus, 'NOERROR', false, query.id, `x${question.name}`));
    }
    return replies;
  }

  /** The records for `name`, following CNAMEs through the zone as a recursive server would. */
  private answers(name: string, type: string): dnsPacket.Answer[] {
    const answers: dnsPacket.Answer[] = [];
    let current = name;
    for (let depth = 0; depth < 8; depth++) {
      const entry = this.zone.get(current);
      if (entry === undefined) break;
      if (entry.cname !== undefined) {
        answers.push({ type: 'CNAME', name: current, ttl: entry.cname.ttl, data: entry.cname.target });
        current = entry.cname.target;
        continue;
      }
      const records = type === 'A' ? entry.a : type === 'AAAA' ? entry.aaaa : undefined;
      for (const record of records ?? []) answers.push({ type: type as 'A' | 'AAAA', name: current, ttl: record.ttl, data: record.address });
      break;
    }
    return answers;
  }
}

/**
 * The address of a DNS server that is down: nothing listens on its port, TCP or UDP (just below
 * the ephemeral range, where nothing binds; see refused_port.ts).
 */
export async function closedDnsServer(): Promise<{ address: string; port: number }> {
  return { address: '127.0.0.1', port: await refusedPort() };
}

/** An A or AAAA record re-encoded with `length` bytes of data; any other record as it is. */
function resizedAddress(record: dnsPacket.Answer, length: number): dnsPacket.Answer {
  if (record.type !== 'A' && record.type !== 'AAAA') return record;
  // A message with the one record ends with the record's address.
  const alone = dnsPacket.encode({ type: 'response', answers: [record] });
  const address = alone.subarray(alone.length - (record.type === 'A' ? 4 : 16));
  const data = Buffer.alloc(length);
  address.copy(data, 0, 0, Math.min(length, address.length));
  const type = record.type === 'A' ? 'UNKNOWN_1' : 'UNKNOWN_28';
  return { type, name: record.name, ttl: record.ttl, data } as unknown as dnsPacket.Answer;
}

/**
 * One server for a test file: started before its tests, emptied before each, closed after.
 * Returns its getter.
 */
export function dnsTestServerForFile(): () => DnsTestServer {
  let server: DnsTestServer | undefined;
  before(async () => {
    server = await DnsTestServer.start();
  });
  after(() => server?.close());
  beforeEach(() => {
    server!.zone.clear();
    server!.queries.length = 0;
  });
  return () => server!;
}
