// Envoy's `ssl.*` statistics of a TLS context (SSL_STATS in 1.16's context_impl.h), under the
// scope of what owns the context: `cluster.<stat_name>.ssl.*` for an upstream one. The fixed
// counters are declared up front; ciphers, versions and curves are named as they are seen.

import type { StatGroup } from '../stats/name_table';
import { StatKind } from '../shared_memory/region_layout';
import type { Counter, Scope } from '../stats/stats';

export const SSL_COUNTERS = [
  'connection_error',
  'handshake',
  'session_reused',
  'no_certificate',
  'fail_verify_no_cert',
  'fail_verify_error',
  'fail_verify_san',
  'fail_verify_cert_hash',
  'ocsp_staple_failed',
  'ocsp_staple_omitted',
  'ocsp_staple_responses',
  'ocsp_staple_requests',
] as const;

export type SslCounterName = (typeof SSL_COUNTERS)[number];

/** What a completed handshake negotiated, in Envoy's (BoringSSL's) spelling. */
export interface NegotiatedParameters {
  /** `TLSv1.2`, `TLSv1.3`. */
  readonly version: string;
  /** OpenSSL's cipher name, e.g. ECDHE-RSA-AES128-GCM-SHA256. */
  readonly cipher: string;
  /** The key exchange group, e.g. X25519 or P-256; null when none was used. */
  readonly curve: string | null;
}

export class SslStats {
  readonly counters: Readonly<Record<SslCounterName, Counter>>;
  private readonly scope: Scope;
  /** Handles of the dynamic counters by full name under ssl., made on first sight. */
  private readonly dynamic = new Map<string, Counter>();

  /** @param owner the scope the `ssl` scope goes under, e.g. `cluster.<stat_name>` */
  constructor(owner: Scope) {
    this.scope = owner.scope('ssl');
    this.counters = Object.fromEntries(SSL_COUNTERS.map((name) => [name, this.scope.counter(name)])) as Record<SslCounterName, Counter>;
  }

  /** Envoy's logHandshake: ssl.handshake and the negotiated cipher, version and curve. */
  chargeHandshake(negotiated: NegotiatedParameters): void {
    this.counters.handshake.inc();
    this.dynamicCounter(`ciphers.${negotiated.cipher}`).inc();
    this.dynamicCounter(`versions.${negotiated.version}`).inc();
    if (negotiated.curve !== null) this.dynamicCounter(`curves.${negotiated.curve}`).inc();
  }

  private dynamicCounter(name: string): Counter {
    let counter = this.dynamic.get(name);
    if (counter === undefined) {
      counter = this.scope.counter(name);
      this.dynamic.set(name, counter);
    }
    return counter;
  }
}

/** The fixed `ssl.*` names, declared under a cluster's prefix so that /stats lists them at 0. */
export const SSL_STAT_GROUP: StatGroup = { scope: 'ssl.', names: SSL_COUNTERS, kind: StatKind.Counter, flags: 0 };

/** OpenSSL's names of the groups Envoy's BoringSSL calls P-256, P-384 and P-521. */
const CURVE_NAMES: Readonly<Record<string, string>> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

/** A group as tls.TLSSocket.getEphemeralKeyInfo() names it, in BoringSSL's spelling. */
export function curveName(openSslName: string): string {
  return CURVE_NAMES[openSslName] ?? openSslName;
}
