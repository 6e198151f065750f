// Profile places mapped back through the source maps written beside compiled files: the bundles'
// (which lead through tsc's to the .ts) and tsc's own. I/O: reads each map once.

import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OriginalPlace } from './profile_summary';

/** Places as `<path relative to root>:<line>` of the source each map names. */
export function sourceMapPlaces(root: string): OriginalPlace {
  const maps = new Map<string, SourceMap | null>();
  const mapOf = (file: string): SourceMap | null => {
    let map = maps.get(file);
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as SourceMapPayload);
      } catch {
        map = null;
      }
      maps.set(file, map);
    }
    return map;
  };
  return (url, line, column) => {
    if (!url.startsWith('file://')) return null;
    const file = fileURLToPath(url);
    const map = mapOf(file);
    if (map === null) return null;
    const entry = map.findEntry(line, column) as { originalSource?: string; originalLine?: number };
    if (entry.originalSource === undefined || entry.originalLine === undefined) return null;
    const source = isAbsolute(entry.originalSource) ? entry.originalSource : resolve(dirname(file), map.payload.sourceRoot ?? '', entry.originalSource);
    return `${relative(root, source)}:${entry.originalLine + 1}`;
  };
}
