// The downstream TLS session's facts that print as text, by the names Envoy's access log command
// operators and custom header variables share (DOWNSTREAM_PEER_*, DOWNSTREAM_TLS_*): SAN lists
// joined with commas. Null (or '') is a fact the session does not have.

import type { SslConnectionInfo } from './stream_info';

export type SslTextFact = (ssl: SslConnectionInfo) => string | null;

export const SSL_TEXT_FACTS: Readonly<Record<string, SslTextFact>> = {
  DOWNSTREAM_PEER_URI_SAN: (ssl) => ssl.peerUriSans.join(','),
  DOWNSTREAM_LOCAL_URI_SAN: (ssl) => ssl.localUriSans.join(','),
  DOWNSTREAM_PEER_SUBJECT: (ssl) => ssl.peerSubject,
  DOWNSTREAM_LOCAL_SUBJECT: (ssl) => ssl.localSubject,
  DOWNSTREAM_PEER_ISSUER: (ssl) => ssl.peerIssuer,
  DOWNSTREAM_PEER_SERIAL: (ssl) => ssl.peerSerial,
  DOWNSTREAM_PEER_FINGERPRINT_256: (ssl) => ssl.peerFingerprint256,
  DOWNSTREAM_PEER_FINGERPRINT_1: (ssl) => ssl.peerFingerprint1,
  DOWNSTREAM_PEER_CERT: (ssl) => ssl.peerCertificatePem,
  DOWNSTREAM_TLS_VERSION: (ssl) => ssl.tlsVersion,
  DOWNSTREAM_TLS_CIPHER: (ssl) => ssl.cipherSuite,
  DOWNSTREAM_TLS_SESSION_ID: (ssl) => ssl.sessionId,
};

/** The text fact named `name`; undefined when it is not one. */
export function sslTextFact(name: string): SslTextFact | undefined {
  return Object.hasOwn(SSL_TEXT_FACTS, name) ? SSL_TEXT_FACTS[name] : undefined;
}
