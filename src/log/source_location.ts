import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import * as path from 'node:path';
import type { SourceLocation } from './pattern';

/** The repository root: this file runs as `<root>/dist/src/log/source_location.js`. */
export const PACKAGE_ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * The path a log line shows for a file: relative to the package root, with a compiled
 * `dist/<x>.js` shown as its source `<x>.ts`.
 */
export function sourcePath(file: string, packageRoot: string): string {
  // Frames such as `node:internal/...` have no file-system path to shorten.
  if (!path.isAbsolute(file)) return file;
  const relative = path.relative(packageRoot, file);
  if (relative.startsWith('..')) return file;
  const compiled = /^dist\/(.+)\.js$/.exec(relative);
  return compiled === null ? relative : `${compiled[1]}.ts`;
}

/** One compiled file as log lines see it: its source map, its call sites seen. */
interface FileSites {
  /** The path shown for a line the map does not cover, or for every line of a file without one. */
  readonly ownPath: string;
  /** Null when the file has no readable source map (plain JS): its own lines are shown. */
  readonly map: SourceMap | null;
  /** The path shown for each source the map names (a bundle's map names many). */
  readonly sourcePaths: Map<string, string>;
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
      const original = originalPosition(sites.map, line, column);
      location = {
        path: original === null ? sites.ownPath : this.shownSource(file, sites, original.source),
        line: original === null ? line : original.line,
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

  /** A source as the map of `file` names it (relative to the map), as log lines show it. */
  private shownSource(file: string, sites: FileSites, source: string): string {
    let shown = sites.sourcePaths.get(source);
    if (shown === undefined) {
      shown = sourcePath(path.resolve(path.dirname(file), sites.map?.payload.sourceRoot ?? '', source), this.packageRoot);
      sites.sourcePaths.set(source, shown);
    }
    return shown;
  }
}

/** The source map written beside a compiled file; null for a file without one. */
function readSourceMap(file: string): SourceMap | null {
  if (!path.isAbsolute(file) || !file.endsWith('.js')) return null;
  try {
    return new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as SourceMapPayload);
  } catch {
    return null;
  }
}

/** `line` and `column` are V8's, 1-based; null for a position the map does not cover (it keeps its own). */
function originalPosition(map: SourceMap | null, line: number, column: number): { source: string; line: number } | null {
  if (map === null) return null;
  const entry = map.findEntry(line - 1, Math.max(column - 1, 0)) as { originalSource?: string; originalLine?: number };
  if (entry.originalSource === undefined || entry.originalLine === undefined) return null;
  return { source: entry.originalSource, line: entry.originalLine + 1 };
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
