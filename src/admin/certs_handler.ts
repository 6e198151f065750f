// GET /certs: envoy.admin.v3.Certificates, pretty, always printed. This build loads no TLS
// context (the configuration check refuses transport_socket), so the list is Envoy's empty one;
// a TLS context that lands adds its CertificateDetails here.

import { AdminHandler, JSON_TYPE } from './admin_server';

export interface CertificateDetails {
  readonly path: string;
  readonly serial_number: string;
  readonly days_until_expiration: string;
  readonly valid_from: string;
  readonly expiration_time: string;
}

export interface LoadedCertificates {
  readonly ca_cert: readonly CertificateDetails[];
  readonly cert_chain: readonly CertificateDetails[];
}

export function renderCerts(contexts: readonly LoadedCertificates[]): string {
  return `${JSON.stringify({ certificates: contexts }, null, 1)}\n`;
}

export function certsHandler(contexts: () => readonly LoadedCertificates[]): AdminHandler {
  return {
    path: '/certs',
    help: 'print certs on machine',
    mutatesState: false,
    decodeQuery: false,
    handle: () => ({ status: 200, contentType: JSON_TYPE, body: renderCerts(contexts()) }),
  };
}
