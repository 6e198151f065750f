// Shapes (shape.ts) of messages that both the bootstrap's core and extensions hold.

import { leaf, list, Shape } from './shape';

// A matcher's safe_regex runs on RE2 (src/regex). A tag's own regex is not taken yet: its
// capture groups cut the name, which the tag producer does for its built-in rules only.
export const REGEX_MATCHER: Shape = { fields: { google_re2: { fields: { max_program_size: leaf } }, regex: leaf } };

export const STRING_MATCHER: Shape = {
  fields: { exact: leaf, prefix: leaf, suffix: leaf, contains: leaf, safe_regex: REGEX_MATCHER, ignore_case: leaf },
};

// The Http2ProtocolOptions node:http2 (nghttp2) is told; a connection manager adds allow_connect
// and the flood limits (downstream only, as in Envoy 1.16); the others stay refused.
export const HTTP2_PROTOCOL_OPTIONS: Shape = {
  fields: { max_concurrent_streams: leaf, initial_stream_window_size: leaf, initial_connection_window_size: leaf, hpack_table_size: leaf },
};

// core.v3.RuntimeFractionalPercent.
export const RUNTIME_FRACTION: Shape = { fields: { default_value: { fields: { numerator: leaf, denominator: leaf } }, runtime_key: leaf } };

// HeaderValueOption as Envoy 1.16 has it; append_action and keep_empty_value are newer.
export const HEADER_VALUE_OPTION: Shape = { fields: { header: { fields: { key: leaf, value: leaf } }, append: leaf } };

// core.v3.GrpcService as GrpcChannel (src/config/xds/grpc_channel.ts) reaches it: a static
// cluster, or a target the gRPC library resolves. Refused: timeouts, initial metadata, and
// google_grpc's credentials and channel settings.
export const GRPC_SERVICE: Shape = { fields: { envoy_grpc: { fields: { cluster_name: leaf } }, google_grpc: { fields: { target_uri: leaf, stat_prefix: leaf } } } };

// core.v3.DataSource as Envoy 1.16 has it (environment_variable is newer). Read when its
// context is built; a file is watched and reloaded when it changes.
export const DATA_SOURCE: Shape = { fields: { filename: leaf, inline_bytes: leaf, inline_string: leaf } };

// tls.v3.TlsCertificate, in a TLS context or a secret: certificate and private key providers,
// OCSP staples and SCTs are refused.
export const TLS_CERTIFICATE: Shape = { fields: { certificate_chain: DATA_SOURCE, private_key: DATA_SOURCE, password: DATA_SOURCE } };

// tls.v3.CertificateValidationContext, in a TLS context or a secret: the deprecated
// verify_subject_alt_name and trust_chain_verification are refused.
export const CERTIFICATE_VALIDATION_CONTEXT: Shape = {
  fields: {
    trusted_ca: DATA_SOURCE,
    match_subject_alt_names: list(STRING_MATCHER),
    verify_certificate_spki: leaf,
    verify_certificate_hash: leaf,
    crl: DATA_SOURCE,
    allow_expired_certificate: leaf,
  },
};
