import * as path from 'node:path';
import type { SourceLocation } from './pattern';

/** The repository root: this file runs as `<root>/dist/src/log/source_location.js`. */
export const PACKAGE_ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * The path a log line shows for a file: relative to the package root, with a compiled
 * `dist/<x>.js` shown as its source `<x>.ts`. Line numbers stay those of the .js file: mapping
 * them through source maps would cost far more than a log line is worth.
 */
export function sourcePath(file: string, packageRoot: string): string {
  // Frames such as `node:internal/...` have no file-system path to shorten.
  if (!path.isAbsolute(file)) return file;
  const relative = path.relative(packageRoot, file);
  if (relative.startsWith('..')) return file;
  const compiled = /^dist\/(.+)\.js$/.exec(relative);
  return compiled === null ? relative : `${compiled[1]}.ts`;
}

/** Finds who called a logging method, for the pattern's %@ %s %g %# %!. */
export class SourceLocator {
  private readonly paths = new Map<string, string>();

  constructor(private readonly packageRoot: string) {}

  /** The location of the code that called `callee`, or null when there is none (e.g. native code). */
  locate(callee: Function): SourceLocation | null {
    const site = callSiteOf(callee);
    const file = site?.getFileName();
    if (site === undefined || file === undefined || file === null) return null;
    return {
      path: this.pathOf(file),
      line: site.getLineNumber() ?? 0,
      functionName: site.getFunctionName() ?? '',
    };
  }

  private pathOf(file: string): string {
    let shown = this.paths.get(file);
    if (shown === undefined) {
      shown = sourcePath(file, this.packageRoot);
      this.paths.set(file, shown);
    }
    return shown;
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
