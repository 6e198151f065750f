// One configured TLS context (Envoy's ContextImpl): the certificates, keys, trusted CAs and
// protocol settings of a CommonTlsContext, loaded into a Node SecureContext for one side. A
// context whose files change is reloaded in place: connections made after see the new
// material, established ones keep theirs.

import { createPrivateKey, X509Certificate } from 'node:crypto';
import * as tls from 'node:tls';
import { atField, FieldError } from '../config/errors';
import type { CommonTlsContextConfig, DataSource } from '../config/model';
import { dataSourceName, readDataSource } from './data_source';
import { tlsProtocolOptions, type TlsSide } from './tls_versions';

/** A certificate as loaded, with where it came from (GET /certs prints both). */
export interface LoadedCertificate {
  readonly source: DataSource;
  readonly certificate: X509Certificate;
}

/** Everything read from the context's sources at one (re)load. */
interface Material {
  readonly secureContext: tls.SecureContext;
  /** The leaf certificate of each tls_certificates entry. */
  readonly certChains: readonly LoadedCertificate[];
  /** The first trusted CA certificate, as Envoy reports it; null without a trusted_ca. */
  readonly caCert: LoadedCertificate | null;
}

export class TlsContext {
  /** The files the context reads: a change to one of them calls for reload(). */
  readonly files: readonly string[];
  private material: Material;

  /**
   * @param common the context's common_tls_context; FieldErrors are relative to it
   * @param secureOptions OpenSSL SSL_OP_* flags for the context (e.g. refusing renegotiation)
   * @throws FieldError naming the source that does not load
   */
  constructor(
    readonly common: CommonTlsContextConfig,
    readonly side: TlsSide,
    private readonly secureOptions = 0,
  ) {
    if (side === 'client' && common.tlsCertificates.length > 1) {
      throw new FieldError('tls_certificates', 'multiple TLS certificates are not supported for client contexts');
    }
    this.files = fileSources(common).map((source) => source.path);
    this.material = load(common, side, secureOptions);
  }

  /** For the next connection: the material as last (re)loaded. */
  get secureContext(): tls.SecureContext {
    return this.material.secureContext;
  }

  get certChains(): readonly LoadedCertificate[] {
    return this.material.certChains;
  }

  get caCert(): LoadedCertificate | null {
    return this.material.caCert;
  }

  /** ALPN protocols to offer (client) or accept (server), in preference order. */
  get alpnProtocols(): readonly string[] {
    return this.common.alpnProtocols;
  }

  /**
   * Reads every source again. Material that does not load (a file caught half-written) leaves
   * the context as it was.
   * @returns null, or the error that kept the old material
   */
  reload(): FieldError | null {
    try {
      this.material = load(this.common, this.side, this.secureOptions);
      return null;
    } catch (e) {
      if (e instanceof FieldError) return e;
      throw e;
    }
  }
}

function load(common: CommonTlsContextConfig, side: TlsSide, secureOptions: number): Material {
  const cert: Buffer[] = [];
  const key: { pem: Buffer; passphrase?: string }[] = [];
  const certChains: LoadedCertificate[] = [];
  common.tlsCertificates.forEach((entry, i) => {
    atField(`tls_certificates[${i}]`, () => {
      const chain = atField('certificate_chain', () => readDataSource(entry.certificateChain));
      const leaf = atField('certificate_chain', () => parseCertificates(chain, entry.certificateChain, 'certificate chain')[0]);
      const passphrase = entry.password === null ? undefined : readDataSource(entry.password).toString('utf8');
      const pem = atField('private_key', () => readDataSource(entry.privateKey));
      atField('private_key', () => checkPrivateKey(pem, passphrase, entry.privateKey));
      cert.push(chain);
      key.push({ pem, passphrase });
      certChains.push({ source: entry.certificateChain, certificate: leaf });
    });
  });
  const validation = common.validationContext;
  let ca: Buffer | undefined;
  let caCert: LoadedCertificate | null = null;
  let crl: Buffer | undefined;
  if (validation !== null) {
    const trustedCa = validation.trustedCa;
    if (trustedCa !== null) {
      atField('validation_context.trusted_ca', () => {
        ca = readDataSource(trustedCa);
        caCert = { source: trustedCa, certificate: parseCertificates(ca, trustedCa, 'trusted CA certificates')[0] };
      });
    }
    if (validation.crl !== null) crl = atField('validation_context.crl', () => readDataSource(validation.crl!));
  }
  const protocol = tlsProtocolOptions(common.tlsParams, side);
  const secureContext = atField('', () => {
    try {
      return tls.createSecureContext({ cert, key, ca, crl, secureOptions, ...protocol });
    } catch (e) {
      throw new FieldError(contextErrorField(e), `cannot build the TLS context: ${(e as Error).message}`);
    }
  });
  return { secureContext, certChains, caCert };
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

/** Which part of the context OpenSSL's complaint is about: protocol settings, or the key pair. */
function contextErrorField(error: unknown): string {
  const message = String((error as Error).message);
  if (/cipher/i.test(message)) return 'tls_params.cipher_suites';
  if (/curve|group/i.test(message)) return 'tls_params.ecdh_curves';
  if (/version/i.test(message)) return 'tls_params';
  return 'tls_certificates';
}

function fileSources(common: CommonTlsContextConfig): Extract<DataSource, { kind: 'file' }>[] {
  const sources: (DataSource | null)[] = [];
  for (const entry of common.tlsCertificates) sources.push(entry.certificateChain, entry.privateKey, entry.password);
  sources.push(common.validationContext?.trustedCa ?? null, common.validationContext?.crl ?? null);
  return sources.filter((source): source is Extract<DataSource, { kind: 'file' }> => source !== null && source.kind === 'file');
}
