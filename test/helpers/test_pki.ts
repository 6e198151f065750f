// Certificates made by a test with the openssl CLI: a CA, and leaf certificates it signs with
// the SANs asked for. Files live in a temp dir removed by `cleanup`.

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const OPENSSL = '/usr/bin/openssl';

export interface KeyPair {
  readonly certPath: string;
  readonly keyPath: string;
  readonly cert: Buffer;
  readonly key: Buffer;
}

export class TestPki {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-pki-'));
  private serial = 1;

  /** A self-signed CA named `name`. */
  ca(name: string): KeyPair {
    const pair = this.paths(name);
    openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', pair.keyPath, '-out', pair.certPath, '-days', '2', '-subj', `/CN=${name}`,
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    return read(pair);
  }

  /** A leaf `name` signed by `ca`, with `sans` (`DNS:a.test`, `IP:127.0.0.1`, `URI:spiffe://x`). */
  leaf(name: string, ca: KeyPair, sans: readonly string[]): KeyPair {
    const pair = this.paths(name);
    const csr = path.join(this.dir, `${name}.csr`);
    const ext = path.join(this.dir, `${name}.ext`);
    openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', pair.keyPath, '-out', csr, '-subj', `/CN=${name}`]);
    fs.writeFileSync(ext, `basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\n${sans.length > 0 ? `subjectAltName=${sans.join(',')}\n` : ''}`);
    openssl(['x509', '-req', '-in', csr, '-CA', ca.certPath, '-CAkey', ca.keyPath, '-set_serial', String(this.serial++), '-days', '2', '-out', pair.certPath, '-extfile', ext]);
    return read(pair);
  }

  cleanup(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private paths(name: string): { certPath: string; keyPath: string } {
    return { certPath: path.join(this.dir, `${name}.pem`), keyPath: path.join(this.dir, `${name}.key`) };
  }
}

function openssl(args: string[]): void {
  execFileSync(OPENSSL, args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
}

function read(pair: { certPath: string; keyPath: string }): KeyPair {
  return { ...pair, cert: fs.readFileSync(pair.certPath), key: fs.readFileSync(pair.keyPath) };
}
