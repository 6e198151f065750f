// The admin listener (bootstrap `admin`).

import type { ValidationContext } from '../extension';
import { FieldError } from '../errors';
import { JsonObject, messageField, stringField } from '../json';
import { validateAdminSecurity } from './admin_security';
import { validateSocketAddress } from './socket_address';

export function validateAdmin(bootstrap: JsonObject, context: ValidationContext): void {
  const admin = messageField(bootstrap, 'admin');
  const address = admin && messageField(admin, 'address');
  const security = admin && messageField(admin, 'security');
  if (security !== undefined && address === undefined) throw new FieldError('admin.security', 'there is no admin listener to secure without admin.address');
  // Without an address there is no admin listener, and nothing else to check.
  if (admin === undefined || address === undefined) return;
  validateSocketAddress(address, 'admin.address', 'ip');
  if (stringField(admin, 'access_log_path') === '') {
    throw new FieldError('admin.access_log_path', 'An admin access log path is required for a listening server.');
  }
  if (security !== undefined) validateAdminSecurity(security, 'admin.security', context);
}
