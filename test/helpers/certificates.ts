// Test certificates made with the openssl CLI: a CA, and leaf certificates it signs with the
// SANs and validity the test asks for.

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface CertificateFiles {
  readonly cert: string;
  readonly key: string;
}

function openssl(args: readonly string[], cwd: string): void {
  execFileSync('/usr/bin/openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A self-signed CA in `dir`, valid for `days`. */
export function makeCa(dir: string, name: string, days: number): CertificateFiles {
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', String(days), '-subj', `/CN=${name}`], dir);
  return { cert, key };
}

/**
 * A leaf certificate signed by `ca`, with subjectAltName `san` (e.g. `DNS:a.example`), valid for
 * `days` from now. Written to `<name>.crt` / `<name>.key`, or to `out` when given.
 */
export function makeLeaf(dir: string, ca: CertificateFiles, name: string, san: string, days: number, out?: CertificateFiles): CertificateFiles {
  const files = out ?? { cert: path.join(dir, `${name}.crt`), key: path.join(dir, `${name}.key`) };
  const csr = path.join(dir, `${name}.csr`);
  const ext = path.join(dir, `${name}.ext`);
  fs.writeFileSync(ext, `subjectAltName=${san}\n`);
  openssl(['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', files.key, '-out', csr, '-subj', `/CN=${name}`], dir);
  openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-out', files.cert, '-days', String(days), '-extfile', ext], dir);
  return files;
}
