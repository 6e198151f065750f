// What this binary is: revision, release, tree status, build mode and TLS library, read from
// dist/build_info.json (written by scripts/gen-build-info.js at build time).

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface BuildInfo {
  readonly revision: string;
  readonly release: boolean;
  readonly version: string;
  readonly treeStatus: 'Clean' | 'Modified' | 'Distribution';
  readonly buildMode: 'RELEASE' | 'DEBUG';
}

export const PACKAGE_ROOT = path.resolve(__dirname, '..', '..', '..');

export function readBuildInfo(): BuildInfo {
  return JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'dist', 'build_info.json'), 'utf8')) as BuildInfo;
}

/** The TLS library Node links, as Envoy names it (`BoringSSL`, here `OpenSSL`), -FIPS in FIPS mode. */
export function tlsLibrary(): string {
  return crypto.getFips() ? 'OpenSSL-FIPS' : 'OpenSSL';
}

/** Release number: the package version, with `-dev` on a development build. */
export function releaseNumber(info: BuildInfo): string {
  return info.release ? info.version : `${info.version}-dev`;
}

/** The five slash-separated fields of --version. */
export function versionString(info: BuildInfo): string {
  return [info.revision, releaseNumber(info), info.treeStatus, info.buildMode, tlsLibrary()].join('/');
}

/** Envoy's server.version gauge: the revision's leading hex digits as an integer. */
export function versionGaugeValue(info: BuildInfo): number {
  return parseInt(info.revision.slice(0, 6), 16) || 0;
}
