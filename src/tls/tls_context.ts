// One configured TLS context (Envoy's ContextImpl): the certificates, keys, trusted CAs and
// protocol settings of a CommonTlsContext, loaded into a Node SecureContext for one side, with
// the checks its peers go through. Certificates and validation contexts are written inline or
// named as secrets (static, or from SDS). A context whose files change, or whose SDS secrets
// are replaced, is reloaded in place: connections made after see the new material, established
// ones keep theirs. Until every SDS secret it names has come, it has no material (not ready).

import { createPrivateKey, X509Certificate } from 'node:crypto';
import * as tls from 'node:tls';
import { atField, FieldError } from '../config/errors';
import type { CertificateValidationContextConfig, CommonTlsContextConfig, DataSource, SdsSecretConfig, SecretValue, TlsCertificateConfig } from '../config/model';
import { dataSourceName, readDataSource } from './data_source';
import { PeerVerifier } from './peer_verification';
import type { SecretSource } from './secret_store';
import { tlsProtocolOptions, type TlsSide } from './tls_versions';

/** A certificate as loaded, with where it came from (GET /certs prints both). */
export interface LoadedCertificate {
  readonly source: DataSource;
  readonly certificate: X509Certificate;
}

/** Everything read from the context's sources and secrets at one (re)load. */
interface Material {
  readonly secureContext: tls.SecureContext;
  /** The leaf certificate of each certificate entry. */
  readonly certChains: readonly LoadedCertificate[];
  /** The first trusted CA certificate, as Envoy reports it; null without a trusted_ca. */
  readonly caCert: LoadedCertificate | null;
  /** The checks of the peer, by the validation context in effect. */
  readonly verifier: PeerVerifier;
}

export interface TlsContextOptions {
  /** OpenSSL SSL_OP_* flags for the context (e.g. refusing renegotiation). */
  readonly secureOptions?: number;
  /** A server asks for a client certificate and refuses a client without one. */
  readonly requireClientCertificate?: boolean;
  /** Where the secrets the context names are found; needed when it names any. */
  readonly secrets?: SecretSource;
}

/** What the context's SdsSecretConfigs resolve to, in order: certificates, then the validation context. */
interface Resolved {
  readonly certificates: readonly (TlsCertificateConfig | null)[];
  readonly validation: CertificateValidationContextConfig | null | undefined;
}

export class TlsContext {
  private material: Material | null = null;
  private readonly certificateSecrets: readonly SdsSecretConfig[];
  /** Null when the context names no secret: nothing to look up before a connection. */
  private readonly secrets: SecretSource | null;
  private secretGeneration = -1;
  private resolved: Resolved = { certificates: [], validation: undefined };

  /**
   * @param common the context's common_tls_context; FieldErrors are relative to it
   * @throws FieldError naming the source that does not load (a context waiting for SDS loads later)
   */
  constructor(
    readonly common: CommonTlsContextConfig,
    readonly side: TlsSide,
    private readonly options: TlsContextOptions = {},
  ) {
    if (side === 'client' && common.tlsCertificates.length + common.tlsCertificateSdsSecretConfigs.length > 1) {
      throw new FieldError('tls_certificates', 'multiple TLS certificates are not supported for client contexts');
    }
    // tls_certificates wins over tls_certificate_sds_secret_configs, as in Envoy.
    this.certificateSecrets = common.tlsCertificates.length > 0 ? [] : common.tlsCertificateSdsSecretConfigs;
    const named = this.certificateSecrets.length > 0 || common.validationContextSdsSecretConfig !== null;
    if (named && options.secrets === undefined) throw new Error('a TLS context naming secrets needs a secret source');
    this.secrets = named ? options.secrets! : null;
    this.resolveSecrets();
    if (!this.ready()) return;
    // What SDS delivered was checked by the supervisor: material that does not load here (a
    // file gone since) leaves the context waiting for the next secret rather than failing its owner.
    const fromSds = [...this.certificateSecrets, common.validationContextSdsSecretConfig].some((config) => config !== null && config.sdsConfig !== null);
    if (fromSds) this.reload();
    else this.material = this.load();
  }

  /** For the next connection: the material as last (re)loaded; null until its SDS secrets have come. */
  get secureContext(): tls.SecureContext | null {
    return this.current()?.secureContext ?? null;
  }

  get certChains(): readonly LoadedCertificate[] {
    return this.current()?.certChains ?? [];
  }

  get caCert(): LoadedCertificate | null {
    return this.current()?.caCert ?? null;
  }

  /** The checks of a peer by the validation context in effect (a context not ready checks nothing). */
  get verifier(): PeerVerifier | null {
    return this.current()?.verifier ?? null;
  }

  /** Whether the context has material: every secret it names has come. */
  get loaded(): boolean {
    return this.current() !== null;
  }

  /** ALPN protocols to offer (client) or accept (server), in preference order. */
  get alpnProtocols(): readonly string[] {
    return this.common.alpnProtocols;
  }

  /** The files the context reads now (its secrets' included): a change to one of them calls for reload(). */
  get files(): readonly string[] {
    this.current();
    return fileSources(this.certificates(), this.validationContext()).map((source) => source.path);
  }

  /**
   * Reads every source again. Material that does not load (a file caught half-written) leaves
   * the context as it was.
   * @returns null, or the error that kept the old material
   */
  reload(): FieldError | null {
    if (!this.ready()) return null;
    try {
      this.material = this.load();
      return null;
    } catch (e) {
      if (e instanceof FieldError) return e;
      throw e;
    }
  }

  /**
   * Loads the context as it would be with `candidate`'s secrets instead of its own source's,
   * without keeping the result: the supervisor refuses an SDS update a context could not use,
   * as Envoy's validation callbacks do (a combined validation context that no longer holds).
   * @throws FieldError relative to common_tls_context
   */
  checkWith(candidate: SecretSource): void {
    if (this.secrets === null) return;
    const resolved = this.resolveFrom(candidate);
    if (ready(resolved) && !sameSecrets(resolved, this.resolved)) this.load(resolved);
  }

  /** The material, reloaded first when a secret it names was replaced since. */
  private current(): Material | null {
    const secrets = this.secrets;
    if (secrets !== null && secrets.generation !== this.secretGeneration) {
      const before = this.resolved;
      this.resolveSecrets();
      // A secret the supervisor accepted that still does not load here keeps the old material.
      if (!sameSecrets(before, this.resolved)) this.reload();
    }
    return this.material;
  }

  private resolveSecrets(): void {
    const secrets = this.secrets;
    if (secrets === null) return;
    this.secretGeneration = secrets.generation;
    this.resolved = this.resolveFrom(secrets);
  }

  private resolveFrom(secrets: SecretSource): Resolved {
    const validation = this.common.validationContextSdsSecretConfig;
    return {
      certificates: this.certificateSecrets.map((config) => tlsCertificateOf(secrets.find(config, 'tls_certificate'))),
      validation: validation === null ? undefined : validationContextOf(secrets.find(validation, 'validation_context')),
    };
  }

  private ready(): boolean {
    return ready(this.resolved);
  }

  /** The certificates in effect, each with the field that configures it. Only when ready. */
  private certificates(resolved = this.resolved): { readonly config: TlsCertificateConfig; readonly field: string }[] {
    if (this.certificateSecrets.length === 0) return this.common.tlsCertificates.map((config, i) => ({ config, field: `tls_certificates[${i}]` }));
    return resolved.certificates.flatMap((config, i) => (config === null ? [] : [{ config, field: `tls_certificate_sds_secret_configs[${i}]` }]));
  }

  /** The inline validation context, the SDS one, or (combined) the SDS one merged into the inline one. */
  private validationContext(resolved = this.resolved): CertificateValidationContextConfig | null {
    const inline = this.common.validationContext;
    const dynamic = resolved.validation;
    if (dynamic === undefined || dynamic === null) return inline;
    return inline === null ? dynamic : mergeValidationContexts(inline, dynamic);
  }

  private load(resolved = this.resolved): Material {
    const { side, options } = this;
    const validation = this.validationContext(resolved);
    const certificates = this.certificates(resolved).map(({ config, field }) => atField(field, () => loadCertificate(config)));
    let ca: Buffer | undefined;
    let caCert: LoadedCertificate | null = null;
    let crl: Buffer | undefined;
    if (validation !== null) {
      if (side === 'client') atField('validation_context', () => checkClientValidationContext(validation));
      const trustedCa = validation.trustedCa;
      if (trustedCa !== null) {
        atField('validation_context.trusted_ca', () => {
          ca = readDataSource(trustedCa);
          caCert = { source: trustedCa, certificate: parseCertificates(ca, trustedCa, 'trusted CA certificates')[0] };
        });
      }
      if (validation.crl !== null) crl = atField('validation_context.crl', () => readDataSource(validation.crl!));
    }
    const protocol = tlsProtocolOptions(this.common.tlsParams, side);
    const secureContext = atField('', () => {
      try {
        return tls.createSecureContext({
          cert: certificates.map((c) => c.chain),
          key: certificates.map((c) => ({ pem: c.key, passphrase: c.passphrase })),
          ca,
          crl,
          secureOptions: options.secureOptions ?? 0,
          ...protocol,
        });
      } catch (e) {
        throw new FieldError(contextErrorField(e), `cannot build the TLS context: ${(e as Error).message}`);
      }
    });
    // A client verifies whenever it has a validation context; a server as configured.
    const verifier = new PeerVerifier(validation, side === 'client' ? validation !== null : (options.requireClientCertificate ?? false));
    return { secureContext, certChains: certificates.map((c) => c.leaf), caCert, verifier };
  }
}

/**
 * A secret's content checked as a context would load it: PEM that parses, a private key that
 * matches its certificate, trusted CAs that parse, a CRL that can be read.
 * @throws FieldError relative to the Secret (`tls_certificate.private_key`, `validation_context.trusted_ca`)
 */
export function checkSecret(secret: SecretValue): void {
  if (secret.kind === 'tls_certificate') {
    atField('tls_certificate', () => {
      const loaded = loadCertificate(secret.tlsCertificate);
      try {
        tls.createSecureContext({ cert: loaded.chain, key: [{ pem: loaded.key, passphrase: loaded.passphrase }] });
      } catch (e) {
        throw new FieldError('private_key', `the private key does not match the certificate: ${(e as Error).message}`);
      }
    });
    return;
  }
  const validation = secret.validationContext;
  atField('validation_context', () => {
    if (validation.trustedCa !== null) atField('trusted_ca', () => parseCertificates(readDataSource(validation.trustedCa!), validation.trustedCa!, 'trusted CA certificates'));
    if (validation.crl !== null) atField('crl', () => readDataSource(validation.crl!));
  });
}

interface LoadedKeyPair {
  readonly chain: Buffer;
  readonly key: Buffer;
  readonly passphrase: string | undefined;
  readonly leaf: LoadedCertificate;
}

/** @throws FieldError at `certificate_chain` or `private_key` */
function loadCertificate(entry: TlsCertificateConfig): LoadedKeyPair {
  const chain = atField('certificate_chain', () => readDataSource(entry.certificateChain));
  const leaf = atField('certificate_chain', () => parseCertificates(chain, entry.certificateChain, 'certificate chain')[0]);
  const passphrase = entry.password === null ? undefined : readDataSource(entry.password).toString('utf8');
  const key = atField('private_key', () => readDataSource(entry.privateKey));
  atField('private_key', () => checkPrivateKey(key, passphrase, entry.privateKey));
  return { chain, key, passphrase, leaf: { source: entry.certificateChain, certificate: leaf } };
}

/** Every certificate of a PEM bundle; at least one, or a FieldError naming the source. */
function parseCertificates(pem: Buffer, source: DataSource, what: string): X509Certificate[] {
  const blocks = pem.toString('latin1').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  try {
    if (blocks === null) throw new Error('no PEM certificate found');
    return blocks.map((block) => new X509Certificate(block));
  } catch (e) {
    throw new FieldError('', `failed to load ${what} from ${dataSourceName(source)}: ${(e as Error).message}`);
  }
}

function checkPrivateKey(pem: Buffer, passphrase: string | undefined, source: DataSource): void {
  try {
    createPrivateKey({ key: pem, passphrase });
  } catch (e) {
    throw new FieldError('', `failed to load private key from ${dataSourceName(source)}: ${(e as Error).message}`);
  }
}

/** Envoy's CertificateValidationContextConfigImpl: a client's checks that need a trusted CA to mean anything. */
function checkClientValidationContext(validation: CertificateValidationContextConfig): void {
  if (validation.trustedCa !== null) return;
  if (validation.crl !== null) throw new FieldError('crl', 'Failed to load CRL without trusted CA');
  if (validation.matchSubjectAltNames.length > 0) {
    throw new FieldError('match_subject_alt_names', 'SAN-based verification of peer certificates without trusted CA is insecure and not allowed');
  }
  if (validation.allowExpiredCertificate) throw new FieldError('allow_expired_certificate', 'Certificate validity period is always ignored without trusted CA');
}

/**
 * combined_validation_context: the SDS one merged into the default as protobuf's MergeFrom does
 * (Envoy's rule): a message or flag it sets replaces the default's, lists add to the default's.
 */
function mergeValidationContexts(base: CertificateValidationContextConfig, dynamic: CertificateValidationContextConfig): CertificateValidationContextConfig {
  return {
    trustedCa: dynamic.trustedCa ?? base.trustedCa,
    matchSubjectAltNames: [...base.matchSubjectAltNames, ...dynamic.matchSubjectAltNames],
    verifyCertificateSpki: [...base.verifyCertificateSpki, ...dynamic.verifyCertificateSpki],
    verifyCertificateHash: [...base.verifyCertificateHash, ...dynamic.verifyCertificateHash],
    crl: dynamic.crl ?? base.crl,
    allowExpiredCertificate: base.allowExpiredCertificate || dynamic.allowExpiredCertificate,
  };
}

/** Which part of the context OpenSSL's complaint is about: protocol settings, or the key pair. */
function contextErrorField(error: unknown): string {
  const message = String((error as Error).message);
  if (/cipher/i.test(message)) return 'tls_params.cipher_suites';
  if (/curve|group/i.test(message)) return 'tls_params.ecdh_curves';
  if (/version/i.test(message)) return 'tls_params';
  return 'tls_certificates';
}

function tlsCertificateOf(secret: SecretValue | null): TlsCertificateConfig | null {
  return secret?.kind === 'tls_certificate' ? secret.tlsCertificate : null;
}

function validationContextOf(secret: SecretValue | null): CertificateValidationContextConfig | null {
  return secret?.kind === 'validation_context' ? secret.validationContext : null;
}

function ready(resolved: Resolved): boolean {
  return !resolved.certificates.includes(null) && resolved.validation !== null;
}

function sameSecrets(a: Resolved, b: Resolved): boolean {
  return a.validation === b.validation && a.certificates.length === b.certificates.length && a.certificates.every((c, i) => c === b.certificates[i]);
}

function fileSources(certificates: readonly { readonly config: TlsCertificateConfig }[], validation: CertificateValidationContextConfig | null): Extract<DataSource, { kind: 'file' }>[] {
  const sources: (DataSource | null)[] = [];
  for (const { config } of certificates) sources.push(config.certificateChain, config.privateKey, config.password);
  sources.push(validation?.trustedCa ?? null, validation?.crl ?? null);
  return sources.filter((source): source is Extract<DataSource, { kind: 'file' }> => source !== null && source.kind === 'file');
}
