// The admin's `security` (proxyext.admin.v3.AdminSecurity, a proxy extension): what the protos
// cannot say. The token files are read, and the TLS context loaded, when the admin is built
// (src/admin/admin_access_setup.ts), in validate mode too.

import { isIP } from 'node:net';
import type { ValidationContext } from '../extension';
import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { JsonObject, messageField, messageList, numberField, stringField } from '../json';
import { TLS_TRANSPORT_SOCKET } from '../names';
import { compileRegexMatcher } from './stats_config';
import { validateExtension } from './extensions';

/** A token's name goes into log lines between quotes: a plain word. */
const TOKEN_NAME = /^[A-Za-z0-9._@:/+-]+$/;

/** @param path `admin.security` */
export function validateAdminSecurity(security: JsonObject, path: string, context: ValidationContext): void {
  const names = new Map<string, number>();
  messageList(security, 'bearer_tokens').forEach((token, i) => {
    const tokenPath = indexPath(childPath(path, 'bearer_tokens'), i);
    requireRole(token, tokenPath);
    const namePath = childPath(tokenPath, 'name');
    const name = stringField(token, 'name');
    if (!TOKEN_NAME.test(name)) throw new FieldError(namePath, `'${name}' is not a plain name (letters, digits and . _ @ : / + -)`);
    const earlier = names.get(name);
    if (earlier !== undefined) throw new FieldError(namePath, `duplicate token name '${name}' (bearer_tokens[${earlier}])`);
    names.set(name, i);
  });
  const socket = messageField(security, 'transport_socket');
  if (socket !== undefined) validateTransportSocket(socket, childPath(path, 'transport_socket'), context);
  const roles = messageList(security, 'client_certificate_roles');
  if (roles.length > 0 && socket === undefined) {
    throw new FieldError(childPath(path, 'client_certificate_roles'), 'client certificates need transport_socket (TLS with a trusted_ca)');
  }
  roles.forEach((entry, i) => {
    const entryPath = indexPath(childPath(path, 'client_certificate_roles'), i);
    requireRole(entry, entryPath);
    for (const field of ['san', 'subject']) {
      const regex = messageField(messageField(entry, field) ?? {}, 'safe_regex');
      if (regex !== undefined) compileRegexMatcher(regex, childPath(childPath(entryPath, field), 'safe_regex'));
    }
  });
  messageList(security, 'allowed_source_ranges').forEach((range, i) => validateCidrRange(range, indexPath(childPath(path, 'allowed_source_ranges'), i)));
}

/** The protos' `not_in: 0` on a role: proto_rules.ts checks an enum's rules only when it is set. */
function requireRole(message: JsonObject, path: string): void {
  if (message['role'] === undefined) throw new FieldError(childPath(path, 'role'), 'a role is required: VIEWER, OPERATOR or ADMIN');
}

/** TLS only, with its material inline or in static secrets: the supervisor subscribes to no SDS secret for the admin. */
function validateTransportSocket(socket: JsonObject, path: string, context: ValidationContext): void {
  validateExtension('proxy.transport_sockets.downstream', socket, path, context);
  if (stringField(socket, 'name') !== TLS_TRANSPORT_SOCKET) {
    throw new FieldError(childPath(path, 'name'), `the admin listener takes ${TLS_TRANSPORT_SOCKET} only`);
  }
  const commonPath = childPath(childPath(path, 'typed_config'), 'common_tls_context');
  const common = messageField(messageField(socket, 'typed_config') ?? {}, 'common_tls_context') ?? {};
  const combined = messageField(common, 'combined_validation_context');
  const secretConfigs: [JsonObject | undefined, string][] = [
    ...messageList(common, 'tls_certificate_sds_secret_configs').map((config, i): [JsonObject, string] => [config, indexPath(childPath(commonPath, 'tls_certificate_sds_secret_configs'), i)]),
    [messageField(common, 'validation_context_sds_secret_config'), childPath(commonPath, 'validation_context_sds_secret_config')],
    [combined && messageField(combined, 'validation_context_sds_secret_config'), childPath(childPath(commonPath, 'combined_validation_context'), 'validation_context_sds_secret_config')],
  ];
  for (const [config, configPath] of secretConfigs) {
    if (config?.['sds_config'] !== undefined) {
      throw new FieldError(childPath(configPath, 'sds_config'), 'the admin listener takes its TLS material inline or from static_resources.secrets, not from SDS');
    }
  }
}

function validateCidrRange(range: JsonObject, path: string): void {
  const prefix = stringField(range, 'address_prefix');
  const family = isIP(prefix);
  if (family === 0) throw new FieldError(childPath(path, 'address_prefix'), `malformed IP address: ${prefix}`);
  const length = numberField(range, 'prefix_len');
  if (length > (family === 4 ? 32 : 128)) throw new FieldError(childPath(path, 'prefix_len'), `${length} is longer than an IPv${family} address`);
}
