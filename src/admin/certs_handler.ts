// GET /certs: envoy.admin.v3.Certificates, pretty, always printed: one entry per TLS context
// (clusters', then listeners'), with its first trusted CA and the leaf of each certificate
// chain, as Envoy's ContextImpl reports them.

import type { X509Certificate } from 'node:crypto';
import { AdminHandler, JSON_TYPE } from './admin_server';
import { subjectAltNames } from '../tls/peer_verification';
import { dataSourceName } from '../tls/data_source';
import type { LoadedCertificate, TlsContext } from '../tls/tls_context';

const DAY_MS = 24 * 60 * 60 * 1000;

export type SubjectAlternateName = { readonly dns: string } | { readonly uri: string } | { readonly ip_address: string };

export interface CertificateDetails {
  readonly path: string;
  readonly serial_number: string;
  readonly subject_alt_names: readonly SubjectAlternateName[];
  /** A uint64, so a string in ProtoJSON. */
  readonly days_until_expiration: string;
  readonly valid_from: string;
  readonly expiration_time: string;
}

export interface LoadedCertificates {
  readonly ca_cert: readonly CertificateDetails[];
  readonly cert_chain: readonly CertificateDetails[];
}

/**
 * Whole days from `nowMs` to the certificate's notAfter, truncated as OpenSSL's ASN1_TIME_diff
 * counts them; an expired certificate has 0.
 */
export function daysUntilExpiration(certificate: X509Certificate, nowMs: number): number {
  return Math.max(0, Math.trunc((Date.parse(certificate.validTo) - nowMs) / DAY_MS));
}

/** Envoy's value with no certificate at all (INT_MAX). */
export const NO_CERTIFICATE_DAYS = 2147483647;

/** The gauge server.days_until_first_cert_expiring: the fewest days over every context's certificates. */
export function daysUntilFirstCertExpires(contexts: readonly TlsContext[], nowMs: number): number {
  let days = NO_CERTIFICATE_DAYS;
  for (const context of contexts) {
    const loaded = context.caCert === null ? context.certChains : [context.caCert, ...context.certChains];
    for (const { certificate } of loaded) days = Math.min(days, daysUntilExpiration(certificate, nowMs));
  }
  return days;
}

export function certificateDetails({ source, certificate }: LoadedCertificate, nowMs: number): CertificateDetails {
  const sans = subjectAltNames(certificate);
  // Envoy lists DNS names, then URIs, then IP addresses.
  const byType = (type: string) => sans.filter((san) => san.type === type).map((san) => san.value);
  return {
    path: dataSourceName(source),
    serial_number: certificate.serialNumber.toLowerCase(),
    subject_alt_names: [
      ...byType('DNS').map((dns) => ({ dns })),
      ...byType('URI').map((uri) => ({ uri })),
      ...byType('IP').map((ip_address) => ({ ip_address })),
    ],
    days_until_expiration: String(daysUntilExpiration(certificate, nowMs)),
    valid_from: timestamp(certificate.validFrom),
    expiration_time: timestamp(certificate.validTo),
  };
}

export function contextCertificates(context: TlsContext, nowMs: number): LoadedCertificates {
  return {
    ca_cert: context.caCert === null ? [] : [certificateDetails(context.caCert, nowMs)],
    cert_chain: context.certChains.map((loaded) => certificateDetails(loaded, nowMs)),
  };
}

/** A certificate time (`Jan  1 00:00:00 2030 GMT`) as a ProtoJSON Timestamp, whole seconds. */
function timestamp(time: string): string {
  return new Date(Date.parse(time)).toISOString().replace('.000Z', 'Z');
}

export function renderCerts(contexts: readonly LoadedCertificates[]): string {
  return `${JSON.stringify({ certificates: contexts }, null, 1)}\n`;
}

/** @param contexts every TLS context loaded, as of the request */
export function certsHandler(contexts: () => readonly TlsContext[], nowMs: () => number = Date.now): AdminHandler {
  return {
    path: '/certs',
    help: 'print certs on machine',
    mutatesState: false,
    decodeQuery: false,
    handle: () => {
      const now = nowMs();
      return { status: 200, contentType: JSON_TYPE, body: renderCerts(contexts().map((context) => contextCertificates(context, now))) };
    },
  };
}
