// The TLS transport socket's configuration in the model: UpstreamTlsContext and
// DownstreamTlsContext (tls.v3) from decoded v3 JSON, defaults filled in. Pure: files named by
// a DataSource are read later, and secrets named by an SdsSecretConfig found, when the context
// is built (src/tls).

import { boolField, enumField, JsonObject, messageField, messageList, numberField, stringField, stringList } from '../../config/json';
import type { CommonTlsContextConfig, DownstreamTransportSocketConfig, TlsParameters, TlsProtocolVersion, TransportSocketConfig } from '../../config/model';
import { sdsSecretConfigOf, tlsCertificateOf, validationContextOf } from '../../config/tls_secret_model';

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
  const combined = messageField(config, 'combined_validation_context');
  const validation = messageField(config, 'validation_context') ?? (combined && messageField(combined, 'default_validation_context'));
  const validationSds = messageField(config, 'validation_context_sds_secret_config') ?? (combined && messageField(combined, 'validation_context_sds_secret_config'));
  return {
    tlsParams: tlsParameters(messageField(config, 'tls_params') ?? {}),
    tlsCertificates: messageList(config, 'tls_certificates').map(tlsCertificateOf),
    tlsCertificateSdsSecretConfigs: messageList(config, 'tls_certificate_sds_secret_configs').map(sdsSecretConfigOf),
    validationContext: validation === undefined ? null : validationContextOf(validation),
    validationContextSdsSecretConfig: validationSds === undefined ? null : sdsSecretConfigOf(validationSds),
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
