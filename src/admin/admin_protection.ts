// The admin's `security` built from the model: the bearer tokens read from their files, the
// certificate roles compiled, and the listener's TLS context loaded (its counters in
// `listener.admin.ssl.*`). The supervisor serves with it; validate mode builds it to report a
// token file or certificate that does not load, by field path, as a start would.

import { atField, FieldError } from '../config/errors';
import type { AdminSecurityConfig } from '../config/model';
import type { Scope } from '../stats/stats';
import { DownstreamSslStats, DownstreamTlsSocketFactory } from '../tls/downstream_tls_socket';
import type { SecretSource } from '../tls/secret_store';
import { SslSocketFactoryStats } from '../tls/ssl_socket_factory_stats';
import { AdminAccess } from './admin_access';
import { BearerTokens } from './bearer_tokens';
import { CertificateRoles } from './certificate_roles';
import { SourceAllowList } from './source_allow_list';

const SECURITY_PATH = 'admin.security';

export interface AdminProtection {
  readonly access: AdminAccess;
  /** null: plaintext. */
  readonly tls: DownstreamTlsSocketFactory | null;
}

/**
 * @param listenerScope the admin listener's (`listener.admin`)
 * @throws FieldError under `admin.security`
 */
export function adminProtection(security: AdminSecurityConfig, secrets: SecretSource, listenerScope: Scope): AdminProtection {
  const tokens = atField(`${SECURITY_PATH}.bearer_tokens`, () => BearerTokens.read(security.bearerTokens));
  const tls =
    security.tls === null
      ? null
      : atField(
          `${SECURITY_PATH}.transport_socket.typed_config.common_tls_context`,
          () => new DownstreamTlsSocketFactory(security.tls!, new DownstreamSslStats(listenerScope.scope('ssl')), new SslSocketFactoryStats(listenerScope, 'server'), secrets),
        );
  // Only a certificate checked against a CA may claim a name.
  if (security.certificateRoles.length > 0 && tls?.context.caCert == null) {
    throw new FieldError(`${SECURITY_PATH}.client_certificate_roles`, 'client certificates can be mapped to roles only when transport_socket verifies them against a trusted_ca');
  }
  const allowList = security.allowedSourceRanges.length === 0 ? null : new SourceAllowList(security.allowedSourceRanges);
  return { access: new AdminAccess(tokens, new CertificateRoles(security.certificateRoles), allowList), tls };
}
