// The admin's `security` (proxyext.admin.v3.AdminSecurity, a proxy extension) in the model, from
// validated v3 JSON. Pure: the token files are read, and the TLS context loaded, by src/admin.

import type { ConfigExtensions } from './extension';
import { enumField, JsonObject, messageField, messageList, numberField, stringField } from './json';
import type { AdminRole, AdminSecurityConfig } from './model';
import { stringMatch } from './string_match_model';

export function adminSecurity(config: JsonObject, extensions: ConfigExtensions): AdminSecurityConfig {
  const socket = messageField(config, 'transport_socket');
  // Validation admitted only the TLS transport socket here.
  const tls = socket === undefined ? null : extensions.model('proxy.transport_sockets.downstream', socket);
  return {
    bearerTokens: messageList(config, 'bearer_tokens').map((token) => ({
      name: stringField(token, 'name'),
      path: stringField(token, 'path'),
      role: roleOf(token),
    })),
    tls: tls?.kind === 'tls' ? tls.context : null,
    certificateRoles: messageList(config, 'client_certificate_roles').map((entry) => {
      const san = messageField(entry, 'san');
      return san === undefined
        ? { identity: 'subject' as const, match: stringMatch(messageField(entry, 'subject') ?? {}), role: roleOf(entry) }
        : { identity: 'san' as const, match: stringMatch(san), role: roleOf(entry) };
    }),
    allowedSourceRanges: messageList(config, 'allowed_source_ranges').map((range) => ({
      addressPrefix: stringField(range, 'address_prefix'),
      prefixLen: numberField(range, 'prefix_len'),
    })),
  };
}

/** The proto rules refused ROLE_UNSPECIFIED. */
function roleOf(message: JsonObject): AdminRole {
  return enumField(message, 'role', 'ROLE_UNSPECIFIED').toLowerCase() as AdminRole;
}
