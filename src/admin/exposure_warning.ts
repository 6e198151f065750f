// The spec leaves the admin open, its protection the network's. When it is bound beyond
// loopback with none of admin.security's protections, the operator is told once, at start.

import { isIPv4 } from 'node:net';
import type { AdminSecurityConfig } from '../config/model';

function isLoopback(address: string): boolean {
  if (isIPv4(address)) return address.startsWith('127.');
  return address === '::1' || /^::ffff:127\./i.test(address);
}

/** Whether anything but the network decides who may call: credentials, client certificates, or source ranges. */
function protects(security: AdminSecurityConfig | null): boolean {
  if (security === null) return false;
  return security.bearerTokens.length > 0 || security.certificateRoles.length > 0 || security.allowedSourceRanges.length > 0 || requiresTrustedClient(security);
}

/** A client certificate required and checked against a CA: without the CA any self-signed one would pass. */
function requiresTrustedClient(security: AdminSecurityConfig): boolean {
  const tls = security.tls;
  if (tls === null || !tls.requireClientCertificate) return false;
  return (tls.common.validationContext?.trustedCa ?? null) !== null || tls.common.validationContextSdsSecretConfig !== null;
}

/** The warning for an admin bound at `address` (the bound IP), or null when it needs none. */
export function exposureWarning(address: string, port: number, security: AdminSecurityConfig | null): string | null {
  if (isLoopback(address) || protects(security)) return null;
  return (
    `admin listener ${address}:${port} is reachable beyond this host and has no bearer tokens, client certificates or source ` +
    `ranges: anyone who reaches it can stop the server. Bind it to 127.0.0.1 or set admin.security (docs/admin.md)`
  );
}
