// Envoy's TLS defaults (tls.v3.TlsParameters, 1.16, non-FIPS) in OpenSSL's terms, for Node's
// secure contexts. Envoy links BoringSSL; the names are the same, apart from BoringSSL's
// equal-preference groups `[A|B]`, which OpenSSL does not have and which become `A:B`.

import type { TlsParameters, TlsProtocolVersion } from '../config/model';

export type TlsSide = 'client' | 'server';

const DEFAULT_CIPHER_SUITES = [
  '[ECDHE-ECDSA-AES128-GCM-SHA256|ECDHE-ECDSA-CHACHA20-POLY1305]',
  '[ECDHE-RSA-AES128-GCM-SHA256|ECDHE-RSA-CHACHA20-POLY1305]',
  'ECDHE-ECDSA-AES128-SHA',
  'ECDHE-RSA-AES128-SHA',
  'AES128-GCM-SHA256',
  'AES128-SHA',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-AES256-SHA',
  'ECDHE-RSA-AES256-SHA',
  'AES256-GCM-SHA384',
  'AES256-SHA',
];
const DEFAULT_ECDH_CURVES = ['X25519', 'P-256'];
/** BoringSSL's TLS 1.3 suites are fixed; OpenSSL reads them from the same list, so they are always appended. */
const TLS13_SUITES = 'TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256';

const NODE_VERSIONS: Readonly<Record<Exclude<TlsProtocolVersion, 'TLS_AUTO'>, 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'>> = {
  TLSv1_0: 'TLSv1',
  TLSv1_1: 'TLSv1.1',
  TLSv1_2: 'TLSv1.2',
  TLSv1_3: 'TLSv1.3',
};

/** The versions, ciphers and curves a context offers, Envoy's defaults filled in per side. */
export interface TlsProtocolOptions {
  readonly minVersion: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  readonly maxVersion: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  readonly ciphers: string;
  readonly ecdhCurve: string;
}

/** Envoy 1.16: clients TLSv1.2 only by default; servers TLSv1.0 to TLSv1.3. */
export function tlsProtocolOptions(params: TlsParameters, side: TlsSide): TlsProtocolOptions {
  const min = params.minimumProtocolVersion === 'TLS_AUTO' ? (side === 'client' ? 'TLSv1_2' : 'TLSv1_0') : params.minimumProtocolVersion;
  const max = params.maximumProtocolVersion === 'TLS_AUTO' ? (side === 'client' ? 'TLSv1_2' : 'TLSv1_3') : params.maximumProtocolVersion;
  const suites = params.cipherSuites.length > 0 ? params.cipherSuites : DEFAULT_CIPHER_SUITES;
  // OpenSSL 3 allows TLS 1.0 and 1.1 only at security level 0, which also admits weak keys: only
  // a configuration that asks for those versions gets it, Envoy's server default does not.
  const asked = params.minimumProtocolVersion;
  const legacy = asked === 'TLSv1_0' || asked === 'TLSv1_1' ? ':@SECLEVEL=0' : '';
  return {
    minVersion: NODE_VERSIONS[min],
    maxVersion: NODE_VERSIONS[max],
    ciphers: `${TLS13_SUITES}:${suites.map(flattenGroup).join(':')}${legacy}`,
    ecdhCurve: (params.ecdhCurves.length > 0 ? params.ecdhCurves : DEFAULT_ECDH_CURVES).join(':'),
  };
}

function flattenGroup(suite: string): string {
  return suite.startsWith('[') && suite.endsWith(']') ? suite.slice(1, -1).replaceAll('|', ':') : suite;
}
