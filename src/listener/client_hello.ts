// Reads what the TLS inspector needs from the first bytes of a connection: whether they are a
// TLS ClientHello and, if so, its SNI host name and ALPN protocols. A ClientHello may span
// several records. Pure: bytes in, a verdict out; nothing is consumed.

/** Envoy's bound on a ClientHello: a longer one closes the connection. */
export const MAX_CLIENT_HELLO_BYTES = 64 * 1024;

export type ClientHelloResult =
  | { readonly kind: 'need_more' }
  | { readonly kind: 'not_tls' }
  | { readonly kind: 'too_large' }
  | { readonly kind: 'client_hello'; readonly serverName: string; readonly alpn: readonly string[] };

const NEED_MORE: ClientHelloResult = { kind: 'need_more' };
const NOT_TLS: ClientHelloResult = { kind: 'not_tls' };
const TOO_LARGE: ClientHelloResult = { kind: 'too_large' };

const RECORD_HEADER = 5;
const HANDSHAKE_RECORD = 0x16;
const CLIENT_HELLO = 0x01;
/** The largest plaintext record TLS allows. */
const MAX_RECORD = 16384;
const EXTENSION_SERVER_NAME = 0;
const EXTENSION_ALPN = 16;
const HOST_NAME = 0;

/** @param data the connection's bytes so far, from its first */
export function parseClientHello(data: Buffer): ClientHelloResult {
  const fragments: Buffer[] = [];
  let handshakeBytes = 0;
  let offset = 0;
  for (;;) {
    if (data.length - offset < RECORD_HEADER) return offset === 0 && data.length > 0 && data[0] !== HANDSHAKE_RECORD ? NOT_TLS : NEED_MORE;
    if (data[offset] !== HANDSHAKE_RECORD || data[offset + 1] !== 3) return NOT_TLS;
    const length = data.readUInt16BE(offset + 3);
    if (length === 0 || length > MAX_RECORD) return NOT_TLS;
    const end = offset + RECORD_HEADER + Math.min(length, data.length - offset - RECORD_HEADER);
    fragments.push(data.subarray(offset + RECORD_HEADER, end));
    handshakeBytes += end - offset - RECORD_HEADER;
    if (handshakeBytes >= 4) {
      const handshake = fragments.length === 1 ? fragments[0] : Buffer.concat(fragments);
      if (handshake[0] !== CLIENT_HELLO) return NOT_TLS;
      const bodyLength = handshake.readUIntBE(1, 3);
      if (4 + bodyLength > MAX_CLIENT_HELLO_BYTES) return TOO_LARGE;
      if (handshake.length >= 4 + bodyLength) return clientHelloBody(handshake.subarray(4, 4 + bodyLength));
    }
    if (end - offset - RECORD_HEADER < length) return NEED_MORE;
    offset = end;
  }
}

/** A reader over a message body that throws on a short read: any malformed field is not TLS. */
class Reader {
  private offset = 0;
  constructor(private readonly data: Buffer) {}

  get remaining(): number {
    return this.data.length - this.offset;
  }

  bytes(n: number): Buffer {
    if (n > this.remaining) throw new RangeError('truncated');
    this.offset += n;
    return this.data.subarray(this.offset - n, this.offset);
  }

  u8(): number {
    return this.bytes(1)[0];
  }

  u16(): number {
    return this.bytes(2).readUInt16BE(0);
  }
}

function clientHelloBody(body: Buffer): ClientHelloResult {
  try {
    const hello = new Reader(body);
    hello.bytes(2 + 32); // legacy_version, random
    hello.bytes(hello.u8()); // legacy_session_id
    const cipherSuites = hello.u16();
    if (cipherSuites === 0 || cipherSuites % 2 !== 0) return NOT_TLS;
    hello.bytes(cipherSuites);
    const compression = hello.u8();
    if (compression === 0) return NOT_TLS;
    hello.bytes(compression);
    let serverName = '';
    let alpn: string[] = [];
    if (hello.remaining === 0) return { kind: 'client_hello', serverName, alpn };
    const extensions = new Reader(hello.bytes(hello.u16()));
    if (hello.remaining !== 0) return NOT_TLS;
    while (extensions.remaining > 0) {
      const type = extensions.u16();
      const content = new Reader(extensions.bytes(extensions.u16()));
      if (type === EXTENSION_SERVER_NAME) serverName = hostName(content);
      else if (type === EXTENSION_ALPN) alpn = protocols(content);
    }
    return { kind: 'client_hello', serverName, alpn };
  } catch (e) {
    if (e instanceof RangeError) return NOT_TLS;
    throw e;
  }
}

/** The first host_name entry, lower case (DNS names compare without case). */
function hostName(content: Reader): string {
  const list = new Reader(content.bytes(content.u16()));
  while (list.remaining > 0) {
    const type = list.u8();
    const name = list.bytes(list.u16());
    if (type === HOST_NAME) return name.toString('latin1').toLowerCase();
  }
  return '';
}

function protocols(content: Reader): string[] {
  const list = new Reader(content.bytes(content.u16()));
  const names: string[] = [];
  while (list.remaining > 0) {
    const length = list.u8();
    if (length === 0) throw new RangeError('empty protocol name');
    names.push(list.bytes(length).toString('latin1'));
  }
  return names;
}
