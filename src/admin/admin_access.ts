// Who may use the admin (admin.security): the source allow-list first, then who the caller is (a
// bearer token, else a verified client certificate mapped to a role), then whether that role
// may use the endpoint (endpoint_roles.ts). Without tokens or certificate roles there is no
// authentication, and whoever passes the allow-list may do anything, as in Envoy. Pure.

import type { X509Certificate } from 'node:crypto';
import type { AdminRole } from '../config/model';
import { rfc2253 } from '../tls/ssl_connection_info';
import type { BearerTokens } from './bearer_tokens';
import type { CertificateRoles } from './certificate_roles';
import { roleAllows } from './endpoint_roles';
import type { SourceAllowList } from './source_allow_list';

/** Why a request was refused: each is counted in `http.admin.auth_denied.<reason>`. */
export const DENIAL_REASONS = ['source_not_allowed', 'missing_credentials', 'invalid_token', 'unknown_certificate', 'insufficient_role'] as const;
export type DenialReason = (typeof DENIAL_REASONS)[number];

export interface AdminCaller {
  /** For the access log: `token:<name>`, `san:<name>`, `subject:<dn>`, or `-` (no authentication). */
  readonly identity: string;
  readonly role: AdminRole;
}

export type AccessVerdict =
  | { readonly kind: 'allowed'; readonly caller: AdminCaller }
  | { readonly kind: 'denied'; readonly reason: DenialReason; readonly identity: string; readonly status: 401 | 403; readonly message: string };

export interface ClientFacts {
  readonly address: string;
  readonly authorization: string | undefined;
  /** The client certificate, when the TLS handshake verified one. */
  readonly certificate: X509Certificate | undefined;
}

const ANONYMOUS = '-';
const BEARER = /^Bearer +(\S+) *$/i;

function denied(reason: DenialReason, identity: string, status: 401 | 403, message: string): AccessVerdict {
  return { kind: 'denied', reason, identity, status, message };
}

export class AdminAccess {
  constructor(
    private readonly tokens: BearerTokens,
    private readonly certificates: CertificateRoles,
    /** null: every source. */
    private readonly allowList: SourceAllowList | null,
  ) {}

  /** Whether callers must prove who they are. */
  get authenticates(): boolean {
    return this.tokens.size + this.certificates.size > 0;
  }

  /** Who is calling; a caller with a token is judged by it alone, even with a certificate. */
  authenticate(client: ClientFacts): AccessVerdict {
    if (this.allowList !== null && !this.allowList.allows(client.address)) {
      return denied('source_not_allowed', ANONYMOUS, 403, `source address ${client.address} is not allowed`);
    }
    if (!this.authenticates) return { kind: 'allowed', caller: { identity: ANONYMOUS, role: 'admin' } };
    if (client.authorization !== undefined) {
      const token = BEARER.exec(client.authorization)?.[1];
      const entry = token === undefined ? null : this.tokens.match(token);
      if (entry === null) return denied('invalid_token', ANONYMOUS, 401, 'invalid bearer token');
      return { kind: 'allowed', caller: { identity: `token:${entry.name}`, role: entry.role } };
    }
    // Without certificate roles a certificate names no one here: the caller still needs a token.
    if (client.certificate !== undefined && this.certificates.size > 0) {
      const caller = this.certificates.callerOf(client.certificate);
      if (caller !== null) return { kind: 'allowed', caller };
      return denied('unknown_certificate', `subject:${rfc2253(client.certificate.subject) ?? ''}`, 403, 'the client certificate has no role here');
    }
    return denied('missing_credentials', ANONYMOUS, 401, 'authentication required');
  }

  /** Whether `caller` may use an endpoint needing `required`. */
  authorize(caller: AdminCaller, required: AdminRole): AccessVerdict {
    if (roleAllows(caller.role, required)) return { kind: 'allowed', caller };
    return denied('insufficient_role', caller.identity, 403, `role ${caller.role} may not use this endpoint (it needs ${required})`);
  }
}
