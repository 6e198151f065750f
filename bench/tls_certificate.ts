// The certificate both TLS-terminating proxies serve in the TLS rows: one self-signed RSA 2048
// certificate per run, so that nginx and ours do the same handshake work.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export interface BenchCertificate {
  readonly certificatePath: string;
  readonly keyPath: string;
}

export class CertificateError extends Error {
  override readonly name = 'CertificateError';
}

export function makeCertificate(dir: string): BenchCertificate {
  const certificatePath = join(dir, 'bench-cert.pem');
  const keyPath = join(dir, 'bench-key.pem');
  const args = ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyPath, '-out', certificatePath, '-days', '2', '-subj', '/CN=localhost'];
  const result = spawnSync('openssl', args, { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    throw new CertificateError(`openssl could not make the TLS rows' certificate: ${result.error?.message ?? result.stderr.trim()}`);
  }
  return { certificatePath, keyPath };
}
