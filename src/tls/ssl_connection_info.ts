// What a downstream TLS session tells the access log (Envoy's Ssl::ConnectionInfo), read from
// the socket only when a log line asks, each fact once: most streams are never logged with
// them, and parsing certificates is not free.

import { createHash, type X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type { SslConnectionInfo } from '../stream_info/stream_info';
import { chainVerifyError } from './downstream_tls_socket';

export class TlsSocketConnectionInfo implements SslConnectionInfo {
  private readonly cache = new Map<string, unknown>();

  constructor(private readonly socket: TLSSocket) {}

  get peerCertificatePresented(): boolean {
    return this.peer() !== null;
  }
  /** The chain verified against the listener's trusted CA (the connection got here, so anything else it checks held too). */
  get peerCertificateValidated(): boolean {
    return this.once('peerCertificateValidated', () => this.peer() !== null && chainVerifyError(this.socket) === null);
  }
  get peerSubject(): string | null {
    return this.once('peerSubject', () => rfc2253(this.peer()?.subject));
  }
  get peerIssuer(): string | null {
    return this.once('peerIssuer', () => rfc2253(this.peer()?.issuer));
  }
  get peerUriSans(): readonly string[] {
    return this.once('peerUriSans', () => altNames(this.peer(), 'URI'));
  }
  get peerDnsSans(): readonly string[] {
    return this.once('peerDnsSans', () => altNames(this.peer(), 'DNS'));
  }
  get peerSerial(): string | null {
    return this.once('peerSerial', () => this.peer()?.serialNumber.toLowerCase() ?? null);
  }
  get peerFingerprint256(): string | null {
    return this.once('peerFingerprint256', () => digest(this.peer(), 'sha256'));
  }
  get peerFingerprint1(): string | null {
    return this.once('peerFingerprint1', () => digest(this.peer(), 'sha1'));
  }
  get peerCertificatePem(): string | null {
    return this.once('peerCertificatePem', () => {
      const peer = this.peer();
      return peer === null ? null : urlEncodePem(peer.toString());
    });
  }
  get peerValidFrom(): Date | null {
    return this.once('peerValidFrom', () => dateOf(this.peer()?.validFrom));
  }
  get peerExpiration(): Date | null {
    return this.once('peerExpiration', () => dateOf(this.peer()?.validTo));
  }
  get localSubject(): string | null {
    return this.once('localSubject', () => rfc2253(this.local()?.subject));
  }
  get localUriSans(): readonly string[] {
    return this.once('localUriSans', () => altNames(this.local(), 'URI'));
  }
  get localDnsSans(): readonly string[] {
    return this.once('localDnsSans', () => altNames(this.local(), 'DNS'));
  }
  get tlsVersion(): string | null {
    return this.socket.getProtocol();
  }
  /** The OpenSSL name, as Envoy's DOWNSTREAM_TLS_CIPHER prints it (ECDHE-RSA-AES128-GCM-SHA256). */
  get cipherSuite(): string | null {
    return this.socket.getCipher()?.name ?? null;
  }
  get sessionId(): string | null {
    return this.once('sessionId', () => {
      const session = this.socket.getSession();
      return session === undefined ? null : sessionIdOf(session);
    });
  }

  private peer(): X509Certificate | null {
    return this.once('peer', () => this.socket.getPeerX509Certificate() ?? null);
  }

  private local(): X509Certificate | null {
    return this.once('local', () => this.socket.getX509Certificate() ?? null);
  }

  private once<T>(key: string, read: () => T): T {
    if (!this.cache.has(key)) this.cache.set(key, read());
    return this.cache.get(key) as T;
  }
}

/** Node's one-attribute-a-line DN, most significant first, as RFC 2253 writes it (least significant first, commas). */
export function rfc2253(name: string | undefined): string | null {
  if (name === undefined || name === '') return null;
  return name.split('\n').reverse().join(',');
}

/** The subjectAltName entries of one kind: `DNS:a, URI:b` -> ['b'] for URI. */
function altNames(certificate: X509Certificate | null, kind: 'DNS' | 'URI'): string[] {
  const names = certificate?.subjectAltName;
  if (names === undefined) return [];
  const prefix = `${kind}:`;
  return names
    .split(', ')
    .filter((entry) => entry.startsWith(prefix))
    .map((entry) => entry.slice(prefix.length));
}

function digest(certificate: X509Certificate | null, algorithm: 'sha256' | 'sha1'): string | null {
  return certificate === null ? null : createHash(algorithm).update(certificate.raw).digest('hex');
}

function dateOf(text: string | undefined): Date | null {
  if (text === undefined) return null;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** Envoy's URL encoding of a PEM certificate: only the characters a PEM holds that a URL would not keep. */
export function urlEncodePem(pem: string): string {
  return pem.replace(/[\n /+=]/g, (c) => ({ '\n': '%0A', ' ': '%20', '/': '%2F', '+': '%2B', '=': '%3D' })[c]!);
}

/**
 * The session id inside a serialized SSL_SESSION (DER: SEQUENCE { version, sslVersion, cipher,
 * sessionId OCTET STRING, ... }), in lower-case hex; null when it is empty or not found.
 */
export function sessionIdOf(der: Buffer): string | null {
  let pos = 0;
  const readHeader = (): { tag: number; length: number } | null => {
    if (pos + 2 > der.length) return null;
    const tag = der[pos++]!;
    let length = der[pos++]!;
    if (length & 0x80) {
      const bytes = length & 0x7f;
      if (bytes > 4 || pos + bytes > der.length) return null;
      length = 0;
      for (let i = 0; i < bytes; i++) length = length * 256 + der[pos++]!;
    }
    return { tag, length };
  };
  const sequence = readHeader();
  if (sequence === null || sequence.tag !== 0x30) return null;
  for (let field = 0; field < 4; field++) {
    const header = readHeader();
    if (header === null || pos + header.length > der.length) return null;
    if (field === 3) {
      if (header.tag !== 0x04 || header.length === 0) return null;
      return der.subarray(pos, pos + header.length).toString('hex');
    }
    pos += header.length;
  }
  return null;
}
