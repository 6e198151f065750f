import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { LineMappings } from './line_mappings';
import type { SourceLocation } from './pattern';

/** The repository root: this file runs as `<root>/dist/src/log/source_location.js`. */
export const PACKAGE_ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * The path a log line shows for a file: relative to the package root, with tsc's
 * `dist/{src,test,bench}/<x>.js` shown as its source `<x>.ts` (a bundle in `dist/bundle/` has no
 * one source).
 */
export function sourcePath(file: string, packageRoot: string): string {
  // Frames such as `node:internal/...` have no file-system path to shorten.
  if (!path.isAbsolute(file)) return file;
  const relative = path.relative(packageRoot, file);
  if (relative.startsWith('..')) return file;
  const compiled = /^dist\/((?:src|test|bench)\/.+)\.js$/.exec(relative);
  return compiled === null ? relative : `${compiled[1]}.ts`;
}

/** What log lines read of a source map: its sources, resolved, and its mappings by line. */
export interface FileMap {
  /** Each source the map names, as its absolute path. */
  readonly sources: readonly string[];
  readonly lines: LineMappings;
}

/** One compiled file as log lines see it: its source map, its call sites seen. */
interface FileSites {
  /** The path shown for a line the map does not cover, or for every line of a file without one. */
  readonly ownPath: string;
  /** Null when the file has no readable source map (plain JS): its own lines are shown. */
  readonly map: FileMap | null;
  /** The path shown for each source of the map, by index (a bundle's map names many). */
  readonly sourcePaths: Map<number, string>;
  /** By generated line, then column: a call site is mapped once, then its location reused. */
  readonly sites: Map<number, Map<number, SourceLocation>>;
}

/**
 * Finds who called a logging method, for the pattern's %@ %s %g %# %!. A compiled file's line
 * is mapped through the source map beside it (`<file>.js.map`: tsc's, or a bundle's, which
 * leads through tsc's to the .ts), so lines name the .ts file and statement; the map is read at
 * the file's first located line and each call site is mapped once, so a line from a known call
 * site costs one stack capture and two map lookups.
 */
export class SourceLocator {
  private readonly files = new Map<string, FileSites>();

  constructor(private readonly packageRoot: string) {}

  /** The location of the code that called `callee`, or null when there is none (e.g. native code). */
  locate(callee: Function): SourceLocation | null {
    const site = callSiteOf(callee);
    const file = site?.getFileName();
    if (site === undefined || file === undefined || file === null) return null;
    const sites = this.sitesOf(file);
    const line = site.getLineNumber() ?? 0;
    const column = site.getColumnNumber() ?? 0;
    let columns = sites.sites.get(line);
    if (columns === undefined) {
      columns = new Map();
      sites.sites.set(line, columns);
    }
    let location = columns.get(column);
    if (location === undefined) {
      // V8's line and column are 1-based, a map's 0-based.
      const original = sites.map?.lines.find(line - 1, Math.max(column - 1, 0)) ?? null;
      const source = original === null ? undefined : sites.map!.sources[original.source];
      location = {
        path: source === undefined ? sites.ownPath : this.shownSource(sites, original!.source, source),
        line: source === undefined ? line : original!.line + 1,
        functionName: site.getFunctionName() ?? '',
      };
      columns.set(column, location);
    }
    return location;
  }

  private sitesOf(file: string): FileSites {
    let sites = this.files.get(file);
    if (sites === undefined) {
      sites = { ownPath: sourcePath(file, this.packageRoot), map: readSourceMap(file), sourcePaths: new Map(), sites: new Map() };
      this.files.set(file, sites);
    }
    return sites;
  }

  /** A source of the file's map, as log lines show it. */
  private shownSource(sites: FileSites, index: number, source: string): string {
    let shown = sites.sourcePaths.get(index);
    if (shown === undefined) {
      shown = sourcePath(source, this.packageRoot);
      sites.sourcePaths.set(index, shown);
    }
    return shown;
  }
}

/** The source map written beside a compiled file; null for a file without one, or one that does not read. */
export function readSourceMap(file: string): FileMap | null {
  if (!path.isAbsolute(file) || !file.endsWith('.js')) return null;
  try {
    const payload = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[]; sourceRoot?: string; mappings: string };
    const root = path.resolve(path.dirname(file), payload.sourceRoot ?? '');
    return { sources: payload.sources.map((source) => path.resolve(root, source)), lines: new LineMappings(payload.mappings) };
  } catch {
    return null;
  }
}

/**
 * The frame just outside `callee`. V8 hands structured call sites only to Error.prepareStackTrace,
 * and it and the frame limit are process-wide: both are swapped in for this one synchronous
 * capture (reading `stack` is what runs the hook) and restored before anything else can run.
 */
function callSiteOf(callee: Function): NodeJS.CallSite | undefined {
  const { prepareStackTrace, stackTraceLimit } = Error;
  Error.prepareStackTrace = (_error, sites) => sites;
  Error.stackTraceLimit = 1;
  try {
    const holder: { stack?: NodeJS.CallSite[] } = {};
    Error.captureStackTrace(holder, callee);
    return holder.stack?.[0];
  } finally {
    Error.prepareStackTrace = prepareStackTrace;
    Error.stackTraceLimit = stackTraceLimit;
  }
}
