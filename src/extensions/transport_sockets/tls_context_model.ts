// The TLS transport socket's configuration in the model: UpstreamTlsContext and
// DownstreamTlsContext (tls.v3) from decoded v3 JSON, defaults filled in. Pure: files named by
// a DataSource are read later, when the context is built (src/tls).

import { boolField, enumField, JsonObject, messageField, messageList, numberField, stringField, stringList } from '../../config/json';
import type {
  CertificateValidationContextConfig,
  CommonTlsContextConfig,
  DataSource,
  DownstreamTransportSocketConfig,
  TlsCertificateConfig,
  TlsParameters,
  TlsProtocolVersion,
  TransportSocketConfig,
} from '../../config/model';
import { stringMatch } from '../../config/string_match_model';

/** An UpstreamTlsContext: a cluster's TLS. */
export function upstreamTlsSocket(context: JsonObject): TransportSocketConfig {
  return {
    kind: 'tls',
    context: {
      common: commonTlsContext(messageField(context, 'common_tls_context') ?? {}),
      sni: stringField(context, 'sni'),
      allowRenegotiation: boolField(context, 'allow_renegotiation'),
      // A UInt32Value: unset means Envoy's default of 1.
      maxSessionKeys: numberField(context, 'max_session_keys', 1),
    },
  };
}

/** A DownstreamTlsContext: a filter chain's TLS. */
export function downstreamTlsSocket(context: JsonObject): DownstreamTransportSocketConfig {
  return {
    kind: 'tls',
    context: {
      common: commonTlsContext(messageField(context, 'common_tls_context') ?? {}),
      requireClientCertificate: boolField(context, 'require_client_certificate'),
      requireSni: boolField(context, 'require_sni'),
    },
  };
}

function commonTlsContext(config: JsonObject): CommonTlsContextConfig {
  const validation = messageField(config, 'validation_context');
  return {
    tlsParams: tlsParameters(messageField(config, 'tls_params') ?? {}),
    tlsCertificates: messageList(config, 'tls_certificates').map(tlsCertificate),
    validationContext: validation === undefined ? null : validationContext(validation),
    alpnProtocols: stringList(config, 'alpn_protocols'),
  };
}

function tlsParameters(config: JsonObject): TlsParameters {
  return {
    minimumProtocolVersion: enumField<TlsProtocolVersion>(config, 'tls_minimum_protocol_version', 'TLS_AUTO'),
    maximumProtocolVersion: enumField<TlsProtocolVersion>(config, 'tls_maximum_protocol_version', 'TLS_AUTO'),
    cipherSuites: stringList(config, 'cipher_suites'),
    ecdhCurves: stringList(config, 'ecdh_curves'),
  };
}

function tlsCertificate(config: JsonObject): TlsCertificateConfig {
  return {
    certificateChain: dataSource(messageField(config, 'certificate_chain') ?? {}),
    privateKey: dataSource(messageField(config, 'private_key') ?? {}),
    password: optionalDataSource(messageField(config, 'password')),
  };
}

function validationContext(config: JsonObject): CertificateValidationContextConfig {
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

function optionalDataSource(config: JsonObject | undefined): DataSource | null {
  return config === undefined ? null : dataSource(config);
}

/** Bytes in ProtoJSON are base64; an empty DataSource is empty inline bytes (Envoy reads it as ""). */
function dataSource(config: JsonObject): DataSource {
  if (typeof config['filename'] === 'string') return { kind: 'file', path: config['filename'] };
  if (typeof config['inline_bytes'] === 'string') return { kind: 'inline', bytes: Buffer.from(config['inline_bytes'], 'base64') };
  return { kind: 'inline', bytes: Buffer.from(stringField(config, 'inline_string'), 'utf8') };
}
