// proxy.transport_sockets.tls on both sides: a filter chain's DownstreamTlsContext (the
// listener's TLS, src/tls/downstream_tls_socket.ts) and a cluster's UpstreamTlsContext
// (src/tls/tls_connector.ts). What a context holds is checked when it is built.

import type { ExtensionDescriptor } from '../../config/extension';
import { CONFIG_SOURCE } from '../../config/capabilities';
import { CERTIFICATE_VALIDATION_CONTEXT, TLS_CERTIFICATE } from '../../config/common_shapes';
import { CONFIG_TYPES, TLS_TRANSPORT_SOCKET } from '../../config/names';
import { leaf, list, Shape } from '../../config/shape';
import type { DataPlaneFactories } from '../data_plane_factories';
import { downstreamTlsSocket, upstreamTlsSocket } from './tls_context_model';

// tls.v3.SdsSecretConfig: a secret by name, from SDS with sds_config, else a static one.
const SDS_SECRET_CONFIG: Shape = { fields: { name: leaf, sds_config: CONFIG_SOURCE } };

// The CommonTlsContext of both sides, as src/tls loads it: certificates and validation contexts
// inline, from static secrets or from SDS (combined_validation_context merges the two).
// Refused: certificate and private key providers, OCSP staples and SCTs, the deprecated
// verify_subject_alt_name and trust_chain_verification.
const COMMON_TLS_CONTEXT: Shape = {
  fields: {
    tls_params: { fields: { tls_minimum_protocol_version: leaf, tls_maximum_protocol_version: leaf, cipher_suites: leaf, ecdh_curves: leaf } },
    tls_certificates: list(TLS_CERTIFICATE),
    tls_certificate_sds_secret_configs: list(SDS_SECRET_CONFIG),
    validation_context: CERTIFICATE_VALIDATION_CONTEXT,
    validation_context_sds_secret_config: SDS_SECRET_CONFIG,
    combined_validation_context: { fields: { default_validation_context: CERTIFICATE_VALIDATION_CONTEXT, validation_context_sds_secret_config: SDS_SECRET_CONFIG } },
    alpn_protocols: leaf,
  },
};

// Session tickets, session timeouts and OCSP stapling are refused: the listener does not set them.
export const DOWNSTREAM_TLS: ExtensionDescriptor<'proxy.transport_sockets.downstream', DataPlaneFactories['proxy.transport_sockets.downstream']> = {
  category: 'proxy.transport_sockets.downstream',
  name: TLS_TRANSPORT_SOCKET,
  aliases: ['tls'],
  configType: CONFIG_TYPES.downstreamTlsContext,
  shape: { fields: { common_tls_context: COMMON_TLS_CONTEXT, require_client_certificate: leaf, require_sni: leaf } },
  model: downstreamTlsSocket,
  factory: null,
};

// allow_renegotiation sets OpenSSL's SSL_OP_NO_RENEGOTIATION when false (Envoy's default) and
// clears it when true.
export const UPSTREAM_TLS: ExtensionDescriptor<'proxy.transport_sockets.upstream', DataPlaneFactories['proxy.transport_sockets.upstream']> = {
  category: 'proxy.transport_sockets.upstream',
  name: TLS_TRANSPORT_SOCKET,
  aliases: ['tls'],
  configType: CONFIG_TYPES.upstreamTlsContext,
  shape: { fields: { common_tls_context: COMMON_TLS_CONTEXT, sni: leaf, allow_renegotiation: leaf, max_session_keys: leaf } },
  model: upstreamTlsSocket,
  factory: null,
};
