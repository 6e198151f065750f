// The repository's import graph as its source text states it, for tests of which code may reach
// which: relative specifiers only (packages are dependencies.test.ts's business), and type-only
// imports count too, since a layer that names another's types depends on it.

import * as fs from 'node:fs';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..', '..');

/** The source files under `dir`: .ts and .js, and every file of a bin/ directory. */
export function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|js)$/.test(entry.name) || dir.endsWith('bin') ? [full] : [];
  });
}

/** The .ts files a source file imports (relative specifiers, type-only imports included), resolved. */
export function importedSourceFiles(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from\s+|require\(\s*|import\(\s*)'(\.[^']*)'/g)].map((m) => m[1]!);
  return specifiers.flatMap((specifier) => {
    const base = path.resolve(path.dirname(file), specifier);
    return [`${base}.ts`, path.join(base, 'index.ts')].filter((candidate) => fs.existsSync(candidate)).slice(0, 1);
  });
}

/**
 * Every file reachable from `roots` by imports, the roots included, each with the file it was
 * first reached from (null for a root). Breadth first, so each chain back is a shortest one.
 */
export function reachableFrom(roots: readonly string[]): Map<string, string | null> {
  const reached = new Map<string, string | null>(roots.map((root) => [root, null]));
  const pending = [...roots];
  for (let i = 0; i < pending.length; i++) {
    for (const imported of importedSourceFiles(pending[i]!)) {
      if (reached.has(imported)) continue;
      reached.set(imported, pending[i]!);
      pending.push(imported);
    }
  }
  return reached;
}

/** How `file` was reached: `root -> ... -> file`, as repository paths. */
export function importChain(reached: ReadonlyMap<string, string | null>, file: string): string {
  const chain: string[] = [];
  for (let at: string | null | undefined = file; at != null; at = reached.get(at)) chain.unshift(path.relative(ROOT, at));
  return chain.join(' -> ');
}
