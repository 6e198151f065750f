// Reading a DNS response off the wire (RFC 1035 4.1), strictly: every length is checked against
// the message, so a packet cut short or lying about a record's size is refused with a
// DnsFormatError instead of being read past its end. Only what the resolver uses is decoded:
// the header, the question and the answer section's A, AAAA and CNAME records of class IN;
// other records are stepped over, and the authority and additional sections are not read.

import * as net from 'node:net';

/** The message breaks the wire format; `offset` is where reading it failed. */
export class DnsFormatError extends Error {
  constructor(
    readonly offset: number,
    reason: string,
  ) {
    super(`malformed DNS message at byte ${offset}: ${reason}`);
    this.name = 'DnsFormatError';
  }
}

export const RECORD_TYPE_CODE = { A: 1, CNAME: 5, AAAA: 28 } as const;
export const CLASS_IN = 1;

export interface DnsQuestion {
  readonly name: string;
  readonly type: number;
  readonly class: number;
}

export interface ResponseHead {
  readonly id: number;
  /** The QR bit: a response, not a query. */
  readonly isResponse: boolean;
  /** The TC bit: the server cut the answer to fit a UDP datagram. */
  readonly truncated: boolean;
  /** NOERROR, NXDOMAIN, SERVFAIL, ... or RCODE<n> for a code without a name. */
  readonly rcode: string;
  readonly question: DnsQuestion;
  readonly answerCount: number;
  /** Where the answer section starts. */
  readonly answersAt: number;
}

export type AnswerRecord =
  | { readonly type: 'A' | 'AAAA'; readonly name: string; readonly ttlSeconds: number; readonly address: string }
  | { readonly type: 'CNAME'; readonly name: string; readonly ttlSeconds: number; readonly target: string };

const HEADER_LENGTH = 12;
const RECORD_FIXED_LENGTH = 10;
/** RFC 1035 2.3.4: a name is at most 255 octets on the wire. */
const MAX_NAME_OCTETS = 255;
const ADDRESS_LENGTH = { A: 4, AAAA: 16 } as const;
const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED', 'YXDOMAIN', 'YXRRSET', 'NXRRSET', 'NOTAUTH', 'NOTZONE'];

function need(message: Buffer, offset: number, length: number, what: string): void {
  if (offset + length > message.length) throw new DnsFormatError(offset, `${what} needs ${length} bytes, ${Math.max(0, message.length - offset)} left`);
}

/** A label as text, escaped as in a zone file so that no label can pass for two. */
function labelText(bytes: Buffer): string {
  let text = '';
  for (const byte of bytes) {
    if (byte === 0x2e || byte === 0x5c) text += `\\${String.fromCharCode(byte)}`;
    else if (byte > 0x20 && byte < 0x7f) text += String.fromCharCode(byte);
    else text += `\\${String(byte).padStart(3, '0')}`;
  }
  return text;
}

/**
 * The (possibly compressed) name at `offset` and where it ends in place. A compression pointer
 * must point before the labels being read, so that reading always ends.
 */
function readName(message: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let octets = 1;
  let position = offset;
  let segmentStart = offset;
  let end: number | null = null;
  for (;;) {
    need(message, position, 1, 'name');
    const length = message[position]!;
    if (length === 0) break;
    const kind = length & 0xc0;
    if (kind === 0xc0) {
      need(message, position, 2, 'compression pointer');
      const target = ((length & 0x3f) << 8) | message[position + 1]!;
      if (target >= segmentStart) throw new DnsFormatError(position, `compression pointer to ${target} does not point back`);
      end ??= position + 2;
      position = segmentStart = target;
      continue;
    }
    if (kind !== 0) throw new DnsFormatError(position, `reserved label type 0x${kind.toString(16)}`);
    octets += 1 + length;
    if (octets > MAX_NAME_OCTETS) throw new DnsFormatError(position, `name longer than ${MAX_NAME_OCTETS} octets`);
    need(message, position + 1, length, 'label');
    labels.push(labelText(message.subarray(position + 1, position + 1 + length)));
    position += 1 + length;
  }
  return { name: labels.join('.'), end: end ?? position + 1 };
}

/** RFC 2181 8: a TTL with the most significant bit set is read as zero. */
function ttlAt(message: Buffer, offset: number): number {
  const ttl = message.readUInt32BE(offset);
  return ttl > 0x7fff_ffff ? 0 : ttl;
}

function addressAt(message: Buffer, offset: number, length: number, type: 'A' | 'AAAA'): string {
  if (length !== ADDRESS_LENGTH[type]) throw new DnsFormatError(offset, `${type} record data of ${length} bytes, not ${ADDRESS_LENGTH[type]}`);
  const bytes = message.subarray(offset, offset + length);
  if (type === 'A') return bytes.join('.');
  const groups = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  // The system's canonical text (RFC 5952 compression), as inet_ntop writes it.
  return new net.SocketAddress({ address: groups.join(':'), family: 'ipv6' }).address;
}

/** The header and the one question; anything else in the question section is a format error. */
export function readResponseHead(message: Buffer): ResponseHead {
  need(message, 0, HEADER_LENGTH, 'header');
  const flags = message.readUInt16BE(2);
  const questionCount = message.readUInt16BE(4);
  if (questionCount !== 1) throw new DnsFormatError(4, `${questionCount} questions, not 1`);
  const { name, end } = readName(message, HEADER_LENGTH);
  need(message, end, 4, 'question');
  const rcode = flags & 0x000f;
  return {
    id: message.readUInt16BE(0),
    isResponse: (flags & 0x8000) !== 0,
    truncated: (flags & 0x0200) !== 0,
    rcode: RCODE_NAMES[rcode] ?? `RCODE${rcode}`,
    question: { name, type: message.readUInt16BE(end), class: message.readUInt16BE(end + 2) },
    answerCount: message.readUInt16BE(6),
    answersAt: end + 4,
  };
}

/**
 * The answer section's A, AAAA and CNAME records of class IN, in order. Every record, read or
 * stepped over, must lie within the message, and an address or alias must fill its record data
 * exactly.
 */
export function readAnswers(message: Buffer, head: ResponseHead): AnswerRecord[] {
  const records: AnswerRecord[] = [];
  let offset = head.answersAt;
  for (let i = 0; i < head.answerCount; i++) {
    const { name, end } = readName(message, offset);
    need(message, end, RECORD_FIXED_LENGTH, 'record header');
    const type = message.readUInt16BE(end);
    const recordClass = message.readUInt16BE(end + 2);
    const ttlSeconds = ttlAt(message, end + 4);
    const dataLength = message.readUInt16BE(end + 8);
    const data = end + RECORD_FIXED_LENGTH;
    need(message, data, dataLength, 'record data');
    offset = data + dataLength;
    if (recordClass !== CLASS_IN) continue;
    if (type === RECORD_TYPE_CODE.A || type === RECORD_TYPE_CODE.AAAA) {
      const addressType = type === RECORD_TYPE_CODE.A ? 'A' : 'AAAA';
      records.push({ type: addressType, name, ttlSeconds, address: addressAt(message, data, dataLength, addressType) });
    } else if (type === RECORD_TYPE_CODE.CNAME) {
      const target = readName(message, data);
      if (target.end !== offset) throw new DnsFormatError(data, `CNAME target of ${target.end - data} bytes in record data of ${dataLength}`);
      records.push({ type: 'CNAME', name, ttlSeconds, target: target.name });
    }
  }
  return records;
}
