// The parts of a TLS configuration that a secret can hold, in the model: TlsCertificate and
// CertificateValidationContext (tls.v3), from decoded v3 JSON, whether written in a TLS context,
// in static_resources.secrets or delivered by SDS; and the SdsSecretConfig that names a secret.
// Pure: files named by a DataSource are read later, when a context is built (src/tls).

import { configSourceOf } from './config_source';
import { boolField, type JsonObject, messageField, messageList, stringField, stringList } from './json';
import type { CertificateValidationContextConfig, DataSource, SdsSecretConfig, SecretConfig, TlsCertificateConfig } from './model';
import { stringMatch } from './string_match_model';

export function tlsCertificateOf(config: JsonObject): TlsCertificateConfig {
  return {
    certificateChain: dataSourceOf(messageField(config, 'certificate_chain') ?? {}),
    privateKey: dataSourceOf(messageField(config, 'private_key') ?? {}),
    password: optionalDataSource(messageField(config, 'password')),
  };
}

export function validationContextOf(config: JsonObject): CertificateValidationContextConfig {
  return {
    trustedCa: optionalDataSource(messageField(config, 'trusted_ca')),
    matchSubjectAltNames: messageList(config, 'match_subject_alt_names').map(stringMatch),
    verifyCertificateSpki: stringList(config, 'verify_certificate_spki'),
    // Envoy accepts the hex digest with or without colons, in either case.
    verifyCertificateHash: stringList(config, 'verify_certificate_hash').map((hash) => hash.replaceAll(':', '').toLowerCase()),
    crl: optionalDataSource(messageField(config, 'crl')),
    allowExpiredCertificate: boolField(config, 'allow_expired_certificate'),
  };
}

export function sdsSecretConfigOf(config: JsonObject): SdsSecretConfig {
  const source = messageField(config, 'sds_config');
  return { name: stringField(config, 'name'), sdsConfig: source === undefined ? null : configSourceOf(source) };
}

/**
 * A Secret of a kind this build takes (the capability check refuses the others, and the protos'
 * one-of leaves at most one set).
 */
export function secretOf(config: JsonObject): SecretConfig {
  const name = stringField(config, 'name');
  const validation = messageField(config, 'validation_context');
  if (validation !== undefined) return { name, value: { kind: 'validation_context', validationContext: validationContextOf(validation) } };
  return { name, value: { kind: 'tls_certificate', tlsCertificate: tlsCertificateOf(messageField(config, 'tls_certificate') ?? {}) } };
}

function optionalDataSource(config: JsonObject | undefined): DataSource | null {
  return config === undefined ? null : dataSourceOf(config);
}

/** Bytes in ProtoJSON are base64; an empty DataSource is empty inline bytes (Envoy reads it as ""). */
function dataSourceOf(config: JsonObject): DataSource {
  if (typeof config['filename'] === 'string') return { kind: 'file', path: config['filename'] };
  if (typeof config['inline_bytes'] === 'string') return { kind: 'inline', bytes: Buffer.from(config['inline_bytes'], 'base64') };
  return { kind: 'inline', bytes: Buffer.from(stringField(config, 'inline_string'), 'utf8') };
}
