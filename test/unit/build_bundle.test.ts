// The bundle build's per-module paths (scripts/build-bundle.js): a bundled module's own
// `__filename`, `__dirname` and `import.meta.url` are declared in its first line, after any
// directive, so that its line numbers and strict mode stay; a module that names none is as it was.
// The built bundles themselves run in every integration test (bin/proxy and each worker).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import * as vm from 'node:vm';
import { ROOT } from '../helpers/import_graph';

const { withModulePaths } = require(path.join(ROOT, 'scripts', 'build-bundle.js')) as {
  withModulePaths(text: string, file: string, bundleDir: string): string;
};

const BUNDLE_DIR = '/checkout/dist/bundle';

/** Runs `text` as the bundle runs a CommonJS module (its own function, after the bundle's helpers) and returns what it exports. */
function runBundled(text: string): Record<string, unknown> {
  const helpers = `const __proxy_bundle_dir = ${JSON.stringify(BUNDLE_DIR)};
function __proxy_module_file(relative) { return require("node:path").join(__proxy_bundle_dir, relative); }
function __proxy_module_url(relative) { return require("node:url").pathToFileURL(__proxy_module_file(relative)).href; }`;
  const module = { exports: {} as Record<string, unknown> };
  vm.runInThisContext(`(function (module, exports, require) {${helpers}\n(function () {${text}\n})();\n})`)(module, module.exports, require);
  return module.exports;
}

test("a CommonJS module gets its own __filename and __dirname in its first line, after 'use strict'", () => {
  const text = "'use strict';\n// a comment\nmodule.exports = { file: __filename, dir: __dirname, strict: (function () { return this; })() === undefined };\n";
  const bundled = withModulePaths(text, '/checkout/dist/src/log/source_location.js', BUNDLE_DIR);
  assert.equal(bundled.split('\n').length, text.split('\n').length);
  assert.ok(bundled.startsWith("'use strict';"), bundled);
  const exported = runBundled(bundled);
  assert.deepEqual(exported, { file: '/checkout/dist/src/log/source_location.js', dir: '/checkout/dist/src/log', strict: true });
});

test("an ES module's import.meta.url is its own file's URL", () => {
  const text = 'export const here = import.meta.url;\n';
  const bundled = withModulePaths(text, '/checkout/node_modules/yargs-parser/build/lib/index.js', BUNDLE_DIR);
  assert.equal(bundled.split('\n').length, text.split('\n').length);
  assert.ok(!bundled.includes('import.meta'), bundled);
  // As the bundler makes an ES module's export a property.
  const exported = runBundled(bundled.replace('export const here =', 'module.exports.here ='));
  assert.deepEqual(exported, { here: 'file:///checkout/node_modules/yargs-parser/build/lib/index.js' });
});

test('a module that names none of them is left as it was', () => {
  const text = "'use strict';\nmodule.exports = 1;\n";
  assert.equal(withModulePaths(text, '/checkout/dist/src/a.js', BUNDLE_DIR), text);
});

test("the built bundles are strict code, as the bundler writes them: the command line's ES modules run at their top level", () => {
  for (const bundle of ['proxy.js', 'worker.js']) {
    const first = fs.readFileSync(path.join(ROOT, 'dist', 'bundle', bundle), 'utf8').split('\n', 1)[0];
    assert.equal(first, '"use strict";', bundle);
  }
});
