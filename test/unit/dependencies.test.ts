// package.json's runtime dependencies are exactly the packages the proxy loads: every one is
// imported by src/ or bin/, and nothing they import is a dev dependency (build-time tools, such
// as the package the protos come from, stay out of a production install). And the layers'
// imports: the configuration pipeline (src/config) depends on nothing it configures.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { reachableFrom, ROOT, sourceFiles } from '../helpers/import_graph';

/** The package names a file imports or requires (`@scope/name` or `name`, subpaths dropped). */
function importedPackages(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from\s+|require\(\s*|import\(\s*)'([^'./][^']*)'/g)].map((m) => m[1]!);
  return specifiers
    .filter((specifier) => !specifier.startsWith('node:'))
    .map((specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/'));
}

test('every runtime dependency is loaded by the proxy, and no dev dependency is', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const imported = new Set([...sourceFiles(path.join(ROOT, 'src')), ...sourceFiles(path.join(ROOT, 'bin'))].flatMap(importedPackages));
  const runtime = Object.keys(manifest.dependencies).sort();
  assert.deepEqual(runtime.filter((name) => !imported.has(name)), [], 'declared but never loaded');
  assert.deepEqual([...imported].filter((name) => !(name in manifest.dependencies)).sort(), [], 'loaded but not a runtime dependency');
});

test('src/config reaches nothing of src/upstream or src/extensions by imports, so the two layers have no cycle', { timeout: 10000 }, () => {
  const src = path.join(ROOT, 'src');
  const config = sourceFiles(path.join(src, 'config')).filter((file) => file.endsWith('.ts'));
  assert.ok(config.length > 0);
  const above = ['upstream', 'extensions'].map((dir) => path.join(src, dir) + path.sep);
  const reached = [...reachableFrom(config).keys()].filter((file) => above.some((dir) => file.startsWith(dir)));
  assert.deepEqual(reached.map((file) => path.relative(ROOT, file)), []);
  // The check can fail: the extension registry does reach src/upstream (its cluster types).
  const registry = reachableFrom([path.join(src, 'extensions', 'builtin_extensions.ts')]);
  assert.ok([...registry.keys()].some((file) => file.startsWith(above[0]!)));
});
