// Profile places mapped back through the source maps written beside compiled files: the bundles'
// (which lead through tsc's to the .ts) and tsc's own, read as log lines read them. I/O: reads
// each map once.

import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readSourceMap, type FileMap } from '../src/log/source_location';
import type { PlaceFinder } from './profile_summary';

/** Places as `<path relative to root>:<line>` of the source each map names. */
export function sourceMapPlaces(root: string): PlaceFinder {
  const maps = new Map<string, FileMap | null>();
  return (url, line, column) => {
    if (!url.startsWith('file://')) return null;
    const file = fileURLToPath(url);
    let map = maps.get(file);
    if (map === undefined) {
      map = readSourceMap(file);
      maps.set(file, map);
    }
    const found = map?.lines.find(line, column) ?? null;
    const source = found === null ? undefined : map!.sources[found.source];
    return source === undefined ? null : `${relative(root, source)}:${found!.line + 1}`;
  };
}
