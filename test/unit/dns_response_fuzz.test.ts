// The DNS response reader under random input from a fixed seed: valid answers, every truncation
// of them, random damage and random bytes. Whatever arrives, it throws nothing but a
// DnsFormatError and reads no address that is not a well-formed IPv4 or IPv6 address.

import assert from 'node:assert/strict';
import * as net from 'node:net';
import { test } from 'node:test';
import * as dnsPacket from 'dns-packet';

import { type DnsVerdict, judgeResponse } from '../../src/network/dns/dns_message';
import { type AnswerRecord, DnsFormatError, readAnswers, readResponseHead } from '../../src/network/dns/dns_response';
import { seededRandom } from '../helpers/seeded_random';

const SEED = 0x5eed_d15;
const QUERY_ID = 0x1234;
const QUERY_NAME = 'svc.example';

type Random = () => number;

function integer(random: Random, below: number): number {
  return Math.floor(random() * below);
}

function pick<T>(random: Random, items: readonly T[]): T {
  return items[integer(random, items.length)]!;
}

function label(random: Random): string {
  return Array.from({ length: 1 + integer(random, 10) }, () => pick(random, [...'abcdefghijklmnopqrstuvwxyz0123456789-'])).join('');
}

function ipv4(random: Random): string {
  return Array.from({ length: 4 }, () => integer(random, 256)).join('.');
}

function ipv6(random: Random): string {
  // Runs of zero groups now and then, so that the compressed forms come up.
  return Array.from({ length: 8 }, () => (random() < 0.4 ? 0 : integer(random, 0x10000)).toString(16)).join(':');
}

/** A response to QUERY_NAME with a random mix of CNAME chains, addresses and other records. */
function validResponse(random: Random): { message: Buffer; addresses: string[]; type: 'A' | 'AAAA' } {
  const type = pick(random, ['A', 'AAAA'] as const);
  const answers: dnsPacket.Answer[] = [];
  const addresses: string[] = [];
  let owner = QUERY_NAME;
  for (let i = integer(random, 3); i > 0; i--) {
    const target = `${label(random)}.example`;
    answers.push({ type: 'CNAME', name: owner, ttl: integer(random, 2 ** 32), data: target });
    owner = target;
  }
  for (let i = integer(random, 6); i > 0; i--) {
    const kind = pick(random, ['A', 'AAAA', 'TXT', 'MX'] as const);
    if (kind === 'A' || kind === 'AAAA') {
      const data = kind === 'A' ? ipv4(random) : ipv6(random);
      answers.push({ type: kind, name: owner, ttl: integer(random, 2 ** 32), data });
      if (kind === type) addresses.push(new net.SocketAddress({ address: data, family: kind === 'A' ? 'ipv4' : 'ipv6' }).address);
    } else if (kind === 'TXT') {
      answers.push({ type: 'TXT', name: owner, ttl: 60, data: label(random) });
    } else {
      answers.push({ type: 'MX', name: owner, ttl: 60, data: { preference: 10, exchange: `${label(random)}.example` } });
    }
  }
  const message = dnsPacket.encode({ type: 'response', id: QUERY_ID, flags: dnsPacket.RECURSION_AVAILABLE, questions: [{ type, name: QUERY_NAME, class: 'IN' }], answers });
  return { message, addresses, type };
}

/** `message` with a few bytes overwritten, some with compression pointers and name-length bytes. */
function damaged(random: Random, message: Buffer): Buffer {
  const copy = Buffer.from(message);
  for (let i = 1 + integer(random, 4); i > 0; i--) {
    const at = integer(random, copy.length);
    copy[at] = pick(random, [0xc0, 0x0c, 0x3f, 0x40, 0x00, 0xff, integer(random, 256)]);
  }
  return copy;
}

/** Random bytes behind a header that asks one question, with a random answer count. */
function noise(random: Random): Buffer {
  const message = Buffer.alloc(12 + integer(random, 200));
  for (let i = 0; i < message.length; i++) message[i] = integer(random, 256);
  message.writeUInt16BE(1, 4);
  message.writeUInt16BE(integer(random, 8), 6);
  return message;
}

function assertWellFormed(record: AnswerRecord): void {
  if (record.type === 'CNAME') return;
  assert.ok(Number.isInteger(record.ttlSeconds) && record.ttlSeconds >= 0 && record.ttlSeconds <= 2 ** 31 - 1, `TTL ${record.ttlSeconds}`);
  if (record.type === 'A') assert.equal(net.isIPv4(record.address), true, record.address);
  else assert.equal(net.isIPv6(record.address), true, record.address);
}

/** The records of `message`, or null when it is malformed; any other exception fails the test. */
function read(message: Buffer): AnswerRecord[] | null {
  try {
    const records = readAnswers(message, readResponseHead(message));
    records.forEach(assertWellFormed);
    return records;
  } catch (error) {
    if (error instanceof DnsFormatError) return null;
    throw error;
  }
}

function assertVerdict(verdict: DnsVerdict | null, type: 'A' | 'AAAA'): void {
  if (verdict?.kind !== 'addresses') return;
  for (const { address } of verdict.addresses) assert.equal(type === 'A' ? net.isIPv4(address) : net.isIPv6(address), true, address);
}

test('valid answers read back as they were written', { timeout: 20_000 }, () => {
  const random = seededRandom(SEED);
  for (let n = 0; n < 2000; n++) {
    const { message, addresses, type } = validResponse(random);
    assert.ok(read(message) !== null);
    const verdict = judgeResponse(message, QUERY_ID, QUERY_NAME, type, false);
    assert.equal(verdict?.kind, 'addresses');
    assert.deepEqual(verdict.kind === 'addresses' && verdict.addresses.map((a) => a.address), addresses);
  }
});

test('every truncation of a valid answer is a format error, and never an address', { timeout: 20_000 }, () => {
  const random = seededRandom(SEED + 1);
  let cases = 0;
  for (let n = 0; n < 300; n++) {
    const { message, type } = validResponse(random);
    for (let length = 0; length < message.length; length++) {
      const prefix = message.subarray(0, length);
      assert.equal(read(prefix), null, `${length} of ${message.length} bytes: ${message.toString('hex')}`);
      const verdict = judgeResponse(prefix, QUERY_ID, QUERY_NAME, type, false);
      assert.ok(verdict === null || verdict.kind === 'malformed', `${length} of ${message.length} bytes: ${verdict?.kind}`);
      cases++;
    }
  }
  assert.ok(cases > 10_000, `${cases} cases`);
});

test('damaged answers and random bytes: a format error or well-formed addresses, nothing else', { timeout: 20_000 }, () => {
  const random = seededRandom(SEED + 2);
  const verdicts = new Map<string, number>();
  for (let n = 0; n < 20_000; n++) {
    const { message, type } = validResponse(random);
    const input = n % 4 === 0 ? noise(random) : damaged(random, message);
    read(input);
    const verdict = judgeResponse(input, QUERY_ID, QUERY_NAME, type, n % 2 === 0);
    assertVerdict(verdict, type);
    verdicts.set(verdict?.kind ?? 'ignored', (verdicts.get(verdict?.kind ?? 'ignored') ?? 0) + 1);
  }
  // The damage reached every outcome, so the cases above exercised each path.
  assert.deepEqual([...verdicts.keys()].sort(), ['addresses', 'ignored', 'malformed', 'server-error', 'truncated']);
});
