// A disk_layer: a directory tree whose file paths are keys (`a/b/c` -> `a.b.c`) and whose file
// contents are values, read as Envoy reads them.

import * as fs from 'node:fs';
import * as path from 'node:path';

/** Envoy's walk stops (and the layer fails to load) below this many directory levels. */
const MAX_WALK_DEPTH = 16;

export class DiskLayerError extends Error {
  override readonly name = 'DiskLayerError';
}

/**
 * The directory a disk layer reads: `<symlink_root>/<subdirectory>`, then the service cluster
 * when append_service_cluster is set.
 */
export function diskLayerPath(symlinkRoot: string, subdirectory: string, appendServiceCluster: boolean, serviceCluster: string): string {
  const base = `${symlinkRoot}/${subdirectory}`;
  return appendServiceCluster ? `${base}/${serviceCluster}` : base;
}

/**
 * A file's value: lines starting with `#` are comments and go, empty lines go, the rest keep
 * their newline except the last line, whose trailing whitespace is trimmed.
 */
export function diskFileValue(text: string): string {
  const lines = text.split('\n').filter((line) => line !== '');
  let value = '';
  lines.forEach((line, i) => {
    if (line.startsWith('#')) return;
    value += i === lines.length - 1 ? line.trimEnd() : `${line}\n`;
  });
  return value;
}

/** A disk layer's values, or null when its directory is missing: no layer, not an error (Envoy's rule). */
export function readDiskLayerIfPresent(dir: string): [string, string][] | null {
  return directoryExists(dir) ? readDiskLayer(dir) : null;
}

function directoryExists(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** @throws DiskLayerError (or a file system error) when the tree cannot be read whole */
export function readDiskLayer(dir: string): [string, string][] {
  const out: [string, string][] = [];
  walk(dir, '', 1, out);
  return out;
}

function walk(dir: string, prefix: string, depth: number, out: [string, string][]): void {
  if (depth > MAX_WALK_DEPTH) throw new DiskLayerError(`Walk recursion depth exceeded ${MAX_WALK_DEPTH}`);
  const names = fs.readdirSync(dir).sort();
  for (const name of names) {
    const full = path.join(dir, name);
    const key = prefix === '' ? name : `${prefix}.${name}`;
    // Symbolic links inside the tree are followed, as the files they name are what an operator means.
    const stat = fs.statSync(full, { throwIfNoEntry: false });
    if (stat === undefined) continue;
    if (stat.isDirectory()) walk(full, key, depth + 1, out);
    else if (stat.isFile()) out.push([key, diskFileValue(fs.readFileSync(full, 'utf8'))]);
  }
}
