// What installing an npm package costs on disk: its own directory plus every package it pulls in
// through `dependencies`, found the way Node resolves them (nearest node_modules up the tree).

import * as fs from 'node:fs';
import * as path from 'node:path';

export interface Footprint {
  readonly version: string;
  /** The package and its transitive runtime dependencies. */
  readonly packages: number;
  readonly bytes: number;
}

interface Manifest {
  readonly name?: string;
  readonly version?: string;
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
}

function readManifest(dir: string): Manifest {
  return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;
}

/** The package root above a resolved entry file (the manifest may not be in `exports`). */
export function packageRootOf(entryFile: string, name: string): string {
  for (let dir = path.dirname(entryFile); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && readManifest(dir).name === name) return dir;
  }
  throw new Error(`no package.json named ${name} above ${entryFile}`);
}

function dependencyDir(name: string, fromDir: string): string | null {
  for (let dir = fromDir; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
  }
  return null;
}

/** Bytes of regular files below `dir`, nested node_modules left to their own packages. */
function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += entry.name === 'node_modules' ? 0 : directoryBytes(full);
    else if (entry.isFile()) total += fs.statSync(full).size;
  }
  return total;
}

export function footprint(rootDir: string): Footprint {
  const seen = new Set<string>();
  const pending = [rootDir];
  let bytes = 0;
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    if (seen.has(dir)) continue;
    seen.add(dir);
    bytes += directoryBytes(dir);
    const manifest = readManifest(dir);
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      const found = dependencyDir(dep, dir);
      if (found !== null) pending.push(found);
    }
  }
  return { version: readManifest(rootDir).version ?? '?', packages: seen.size, bytes };
}
