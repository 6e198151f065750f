// proxy.transport_sockets.tls on both sides: a filter chain's DownstreamTlsContext (the
// listener's TLS, src/tls/downstream_tls_socket.ts) and a cluster's UpstreamTlsContext
// (src/tls/tls_connector.ts). What a context holds is checked when it is built.

import type { ExtensionDescriptor } from '../../config/extension';
import { STRING_MATCHER } from '../../config/common_shapes';
import { CONFIG_TYPES, TLS_TRANSPORT_SOCKET } from '../../config/names';
import { leaf, list, Shape } from '../../config/shape';
import type { DataPlaneFactories } from '../data_plane_factories';
import { downstreamTlsSocket, upstreamTlsSocket } from './tls_context_model';

// core.v3.DataSource as Envoy 1.16 has it (environment_variable is newer). Read when its
// context is built; a file is watched and reloaded when it changes.
const DATA_SOURCE: Shape = { fields: { filename: leaf, inline_bytes: leaf, inline_string: leaf } };

// The CommonTlsContext of both sides, as src/tls loads it. Refused: SDS secrets, certificate
// and private key providers, OCSP staples and SCTs, combined and SDS validation contexts, the
// deprecated verify_subject_alt_name and trust_chain_verification.
const COMMON_TLS_CONTEXT: Shape = {
  fields: {
    tls_params: { fields: { tls_minimum_protocol_version: leaf, tls_maximum_protocol_version: leaf, cipher_suites: leaf, ecdh_curves: leaf } },
    tls_certificates: list({ fields: { certificate_chain: DATA_SOURCE, private_key: DATA_SOURCE, password: DATA_SOURCE } }),
    validation_context: {
      fields: {
        trusted_ca: DATA_SOURCE,
        match_subject_alt_names: list(STRING_MATCHER),
        verify_certificate_spki: leaf,
        verify_certificate_hash: leaf,
        crl: DATA_SOURCE,
        allow_expired_certificate: leaf,
      },
    },
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
