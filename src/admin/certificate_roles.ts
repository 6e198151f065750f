// client_certificate_roles: the role of a verified client certificate, by the first entry whose
// matcher takes one of its URI, DNS or IP subjectAltNames, or its subject (RFC 2253, as the
// access log's %DOWNSTREAM_PEER_SUBJECT% writes it).

import type { X509Certificate } from 'node:crypto';
import type { AdminCertificateRole, AdminRole } from '../config/model';
import { stringMatcher } from '../common/string_matcher';
import { subjectAltNames } from '../tls/peer_verification';
import { rfc2253 } from '../tls/ssl_connection_info';

export interface CertificateCaller {
  /** What matched: `san:<name>` or `subject:<dn>`, for the logs. */
  readonly identity: string;
  readonly role: AdminRole;
}

interface CompiledRole {
  readonly identity: 'san' | 'subject';
  readonly test: (value: string) => boolean;
  readonly role: AdminRole;
}

export class CertificateRoles {
  private readonly roles: readonly CompiledRole[];

  constructor(roles: readonly AdminCertificateRole[]) {
    this.roles = roles.map((r) => ({ identity: r.identity, test: stringMatcher(r.match), role: r.role }));
  }

  get size(): number {
    return this.roles.length;
  }

  /** @param certificate verified against the listener's trusted CA */
  callerOf(certificate: X509Certificate): CertificateCaller | null {
    const sans = subjectAltNames(certificate).filter((san) => san.type !== 'other');
    const subject = rfc2253(certificate.subject);
    for (const entry of this.roles) {
      if (entry.identity === 'san') {
        const san = sans.find((s) => entry.test(s.value));
        if (san !== undefined) return { identity: `san:${san.value}`, role: entry.role };
      } else if (subject !== null && entry.test(subject)) {
        return { identity: `subject:${subject}`, role: entry.role };
      }
    }
    return null;
  }
}
