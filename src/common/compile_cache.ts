// V8's compiled code for the proxy's modules, made at build time (scripts/build-compile-cache.js)
// and read at start: compiling the modules is the largest part of a process's start (Node 20 has
// no module.enableCompileCache). Each module's entry holds the SHA-1 of the source it was made
// from, so an edited module compiles anew: V8 checks only the source's length. V8 rejects code
// made under other flags (a worker's --max-semi-space-size among them), so each set of flags has
// its own file. Loaded first by each process's entry point; node's built-ins only.

import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Module from 'node:module';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';

/** A module's compiled code and the hash of the source it was made from. */
export interface CachedModule {
  readonly sourceHash: string;
  readonly data: Buffer;
}

/** What one cache file holds: by path relative to the checkout's root. */
export type CompileCache = Map<string, CachedModule>;

/** How many of a process's modules came from the cache, and how many did not match it (for tests). */
export interface CompileCacheUse {
  fromCache: number;
  /** In the cache but made from another source, or refused by V8 (other flags or V8 version). */
  stale: number;
}

/** Node's private module loader methods the hook stands in for. */
export interface LoaderModule {
  /** `format` since node 20.19: 'module' for an ES module required (require(esm)). */
  _compile(content: string, filename: string, format?: string): unknown;
  require(id: string): unknown;
  exports: unknown;
}

export interface ModuleStatics {
  prototype: LoaderModule;
  wrap(content: string): string;
  _resolveFilename(request: string, parent: LoaderModule, isMain: boolean, options?: unknown): string;
  _cache: unknown;
  _extensions: unknown;
}

export const loader = Module as unknown as ModuleStatics;

export function sourceHash(content: string): string {
  return hash('sha1', content);
}

/** The cache file of this process's V8 flags, in `dir`. */
export function cacheFile(dir: string, execArgv: readonly string[] = process.execArgv): string {
  return path.join(dir, `${sourceHash(execArgv.join('\0')).slice(0, 12)}.bin`);
}

/** `content` wrapped as node's CommonJS loader wraps a module, as a script: only a script takes and gives cached data. */
export function moduleScript(content: string, filename: string, cachedData?: Buffer): vm.Script {
  return new vm.Script(loader.wrap(content), { filename, cachedData });
}

/** Runs a module's script for `module`, with the arguments node's loader gives a module. */
export function runModule(module: LoaderModule, script: vm.Script, filename: string): void {
  const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
  const moduleRequire = Object.assign((id: string) => module.require(id), {
    resolve: (request: string, options?: unknown) => loader._resolveFilename(request, module, false, options),
    main: require.main,
    cache: loader._cache,
    extensions: loader._extensions,
  });
  wrapper.call(module.exports, module.exports, moduleRequire, module, filename, path.dirname(filename));
}

/** Node's loader passes no format, or 'commonjs', for a module it wraps; an ES module is another matter. */
export function isCommonJs(format: string | undefined): boolean {
  return format === undefined || format === 'commonjs';
}

/** Where a checkout's build keeps its caches, one file per set of V8 flags. */
export function buildCacheDir(root: string): string {
  return path.join(root, 'dist', 'compile_cache');
}

/**
 * Reads a cache file. Empty when there is none (a build that made none) or it does not read: a
 * cache only saves time, so a damaged one means compiling, not failing to start.
 */
export function readCompileCache(file: string): CompileCache {
  try {
    return v8.deserialize(readFileSync(file)) as CompileCache;
  } catch {
    return new Map();
  }
}

/** Uses the cache the build of the checkout at `root` made for this process's flags. */
export function useBuildCompileCache(root: string): CompileCacheUse {
  return useCompileCache(readCompileCache(cacheFile(buildCacheDir(root))), root);
}

/**
 * From now on, a module of `cache` (paths relative to `root`) whose source matches compiles from
 * its cached code; every other module as node compiles it.
 */
export function useCompileCache(cache: CompileCache, root: string): CompileCacheUse {
  const use: CompileCacheUse = { fromCache: 0, stale: 0 };
  if (cache.size === 0) return use;
  const nodeCompile = loader.prototype._compile;
  loader.prototype._compile = function (this: LoaderModule, content: string, filename: string, format?: string) {
    const relative = path.relative(root, filename);
    const cached = isCommonJs(format) ? cache.get(relative) : undefined;
    if (cached === undefined) return nodeCompile.call(this, content, filename, format);
    // A module loads once: its code is not kept past its use.
    cache.delete(relative);
    if (cached.sourceHash !== sourceHash(content)) {
      use.stale++;
      return nodeCompile.call(this, content, filename, format);
    }
    const script = moduleScript(content, filename, cached.data);
    if (script.cachedDataRejected === true) use.stale++;
    else use.fromCache++;
    runModule(this, script, filename);
    return undefined;
  };
  return use;
}
