// Envoy's checks of a peer certificate after the handshake (ContextImpl::verifyCertificate):
// the chain against trusted_ca, match_subject_alt_names, and the pinned hashes or SPKIs. Each
// failure is named by the `ssl.fail_verify_*` counter it increments. Pure: the handshake's
// outcome in, a verdict out.

import { createHash, type X509Certificate } from 'node:crypto';
import { stringMatcher } from '../common/string_matcher';
import type { CertificateValidationContextConfig, StringMatch } from '../config/model';

export type VerifyFailure = 'fail_verify_no_cert' | 'fail_verify_error' | 'fail_verify_san' | 'fail_verify_cert_hash';

/** What the TLS socket reports about the peer once the handshake is done. */
export interface PeerCertificate {
  /** The chain verified against the trusted CAs (tls.TLSSocket.authorized). */
  readonly authorized: boolean;
  /** OpenSSL's reason when not authorized, e.g. CERT_HAS_EXPIRED. */
  readonly authorizationError: string | null;
  readonly certificate: X509Certificate | undefined;
}

interface SanMatcher {
  readonly exact: string | null;
  readonly test: (value: string) => boolean;
}

export class PeerVerifier {
  private readonly sanMatchers: readonly SanMatcher[];
  private readonly hashes: ReadonlySet<string>;
  private readonly spkis: ReadonlySet<string>;

  /** @param requireCertificate a peer without a certificate fails (clients always require one when verifying) */
  constructor(
    private readonly config: CertificateValidationContextConfig | null,
    private readonly requireCertificate: boolean,
  ) {
    this.sanMatchers = (config?.matchSubjectAltNames ?? []).map(sanMatcher);
    this.hashes = new Set(config?.verifyCertificateHash ?? []);
    this.spkis = new Set(config?.verifyCertificateSpki ?? []);
  }

  /** Whether any check runs at all: without one, the peer is not asked for anything. */
  get verifies(): boolean {
    return this.requireCertificate || this.config !== null;
  }

  /**
   * @param extraSans names the peer must also hold (auto_san_validation's host name), checked as
   *   Envoy checks its per-connection SAN list: DNS names with wildcards, other SANs exactly
   * @returns null when the peer passes, else the failure
   */
  verify(peer: PeerCertificate, extraSans: readonly string[] = []): VerifyFailure | null {
    const config = this.config;
    const certificate = peer.certificate;
    if (certificate === undefined) return this.requireCertificate ? 'fail_verify_no_cert' : null;
    if (config !== null && config.trustedCa !== null && !peer.authorized) {
      const expiredAllowed = config.allowExpiredCertificate && (peer.authorizationError === 'CERT_HAS_EXPIRED' || peer.authorizationError === 'CERT_NOT_YET_VALID');
      if (!expiredAllowed) return 'fail_verify_error';
    }
    if (extraSans.length > 0 && !holdsName(subjectAltNames(certificate), extraSans)) return 'fail_verify_san';
    if (this.sanMatchers.length > 0 && !matchesSan(subjectAltNames(certificate), this.sanMatchers)) return 'fail_verify_san';
    if ((this.hashes.size > 0 || this.spkis.size > 0) && !this.matchesPin(certificate)) return 'fail_verify_cert_hash';
    return null;
  }

  /** Either list may pin the certificate: Envoy accepts a match in one of them. */
  private matchesPin(certificate: X509Certificate): boolean {
    if (this.hashes.size > 0 && this.hashes.has(certificate.fingerprint256.replaceAll(':', '').toLowerCase())) return true;
    if (this.spkis.size === 0) return false;
    const spki = certificate.publicKey.export({ type: 'spki', format: 'der' });
    return this.spkis.has(createHash('sha256').update(spki).digest('base64'));
  }
}

function sanMatcher(match: StringMatch): SanMatcher {
  return { exact: match.kind === 'exact' && !match.ignoreCase ? match.value : null, test: stringMatcher(match) };
}

/** A SAN of the peer as Node lists it: `DNS:a.example`, `URI:spiffe://...`, `IP Address:127.0.0.1`. */
interface SubjectAltName {
  readonly type: 'DNS' | 'URI' | 'IP' | 'other';
  readonly value: string;
}

/** DNS, URI and IP SANs take part, as in Envoy 1.16; an exact DNS match honors a wildcard in the certificate. */
function matchesSan(sans: readonly SubjectAltName[], matchers: readonly SanMatcher[]): boolean {
  for (const san of sans) {
    if (san.type === 'other') continue;
    for (const matcher of matchers) {
      if (san.type === 'DNS' && matcher.exact !== null ? dnsNameMatch(matcher.exact, san.value) : matcher.test(san.value)) return true;
    }
  }
  return false;
}

/** Envoy's verifySubjectAltName: one of the SANs is one of `names` (DNS SANs may be wildcards). */
function holdsName(sans: readonly SubjectAltName[], names: readonly string[]): boolean {
  return sans.some((san) => names.some((name) => (san.type === 'DNS' ? dnsNameMatch(name, san.value) : san.value === name)));
}

/** Envoy's dnsNameMatch: `*.example.com` in the certificate covers exactly one label. */
export function dnsNameMatch(name: string, pattern: string): boolean {
  const host = name.toLowerCase();
  const wanted = pattern.toLowerCase();
  if (host === wanted) return true;
  if (!wanted.startsWith('*.')) return false;
  const dot = host.indexOf('.');
  return dot > 0 && host.slice(dot) === wanted.slice(1);
}

/**
 * Parses X509Certificate.subjectAltName. Node writes entries as `TYPE:value` joined by `, `, and
 * quotes a value (JSON string syntax) when it holds a comma or a quote.
 */
export function subjectAltNames(certificate: X509Certificate): SubjectAltName[] {
  const text = certificate.subjectAltName;
  if (text === undefined) return [];
  const names: SubjectAltName[] = [];
  const entry = /(DNS|URI|IP Address|[A-Za-z ]+):("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/g;
  for (let m = entry.exec(text); m !== null && m[0] !== ''; m = entry.exec(text)) {
    const value = m[2].startsWith('"') ? (JSON.parse(m[2]) as string) : m[2];
    const type = m[1] === 'DNS' ? 'DNS' : m[1] === 'URI' ? 'URI' : m[1] === 'IP Address' ? 'IP' : 'other';
    names.push({ type, value });
  }
  return names;
}
