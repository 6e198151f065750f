import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { footprint, packageRootOf } from '../../bench/package_footprint';

/** Writes `files` (path -> content) below a new temp dir and returns it. */
function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-footprint-'));
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), content);
  }
  return root;
}

test('a package counts itself and its transitive dependencies, each once, found as Node would', () => {
  const manifest = (name: string, deps: string[]) =>
    JSON.stringify({ name, version: '1.0.0', dependencies: Object.fromEntries(deps.map((d) => [d, '*'])) });
  const root = tree({
    'node_modules/top/package.json': manifest('top', ['shared', 'nested', 'absent']),
    'node_modules/top/lib/index.js': 'x'.repeat(100),
    // `nested` resolves to top's own copy, not the hoisted one; `shared` is reached twice.
    'node_modules/top/node_modules/nested/package.json': manifest('nested', ['shared']),
    'node_modules/nested/package.json': manifest('nested', []),
    'node_modules/nested/big.js': 'x'.repeat(10_000),
    'node_modules/shared/package.json': manifest('shared', []),
  });
  try {
    const top = packageRootOf(path.join(root, 'node_modules/top/lib/index.js'), 'top');
    assert.equal(top, path.join(root, 'node_modules/top'));
    const bytes = ['top/package.json', 'top/lib/index.js', 'top/node_modules/nested/package.json', 'shared/package.json']
      .map((file) => fs.statSync(path.join(root, 'node_modules', file)).size)
      .reduce((a, b) => a + b);
    assert.deepEqual(footprint(top), { version: '1.0.0', packages: 3, bytes });
    assert.throws(() => packageRootOf(path.join(root, 'node_modules/top/lib/index.js'), 'other'), /no package.json named other/);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
