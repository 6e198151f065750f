#!/usr/bin/env node
// Makes dist/bundle/: the supervisor's and the worker's code (tsc's output and the packages it
// requires), each one file. Loading some 800 modules one by one (resolving each request,
// reading each file and its package's scope, wrapping and compiling each) was a third of a
// process's start; one file is found, read and compiled from the compile cache at once. Each bundled module still sees its
// own `__filename`, `__dirname` and `import.meta.url` (per-file loggers, pino's and yargs' files),
// and the bundle's source map leads back to the .ts lines (log patterns' %s %#).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');

const root = path.resolve(__dirname, '..');
const outDir = path.join(root, 'dist', 'bundle');

/** Each bundle and the compiled module it starts from. */
const BUNDLES = [
  { out: 'proxy.js', entry: 'dist/src/cli/main.js' },
  { out: 'worker.js', entry: 'dist/src/server/worker_main.js' },
];

/**
 * Before the bundled modules: the paths of a module, given relative to the bundle (so the
 * checkout can move), by functions no module's names shadow. The bundle's directory is taken
 * first: the entry module's code runs in the bundle's own scope, where its `__dirname` is declared.
 * The directive comes first, as the bundler writes it without a banner: the ES modules (the
 * command line's) run at the bundle's top level, and are strict code.
 */
const BANNER = [
  '"use strict";',
  'const __proxy_bundle_dir = __dirname;',
  'function __proxy_module_file(relative) { return require("node:path").join(__proxy_bundle_dir, relative); }',
  'function __proxy_module_url(relative) { return require("node:url").pathToFileURL(__proxy_module_file(relative)).href; }',
].join('\n');

/** Before a module's first statement: a hashbang line, comments and a "use strict" directive stay first. */
const PROLOGUE = /^(?:#![^\n]*\n)?(?:\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/)*(?:(['"])use strict\1;?)?/;
const ES_MODULE = /^\s*(?:import|export)\b/m;

/**
 * `text` of the module at `file` with its own paths declared in its first line (so that the
 * line numbers its source map gives stay right): CommonJS's `__filename` and `__dirname`, or an
 * ES module's `import.meta.url`, which the bundle, being CommonJS, does not have.
 */
function withModulePaths(text, file, bundleDir = outDir) {
  const usesMeta = text.includes('import.meta.url');
  if (!usesMeta && !text.includes('__dirname') && !text.includes('__filename')) return text;
  const relative = JSON.stringify(path.relative(bundleDir, file));
  if (ES_MODULE.test(text)) {
    if (!usesMeta) return text;
    // A module-level name: the bundler renames it apart from every other module's.
    const declaration = `var __proxy_import_meta_url = __proxy_module_url(${relative});`;
    return declaration + text.replaceAll('import.meta.url', '__proxy_import_meta_url');
  }
  const prologue = PROLOGUE.exec(text)[0];
  const declaration = `;var __filename = __proxy_module_file(${relative}), __dirname = __proxy_module_file(${relative} + "/..");`;
  return prologue + declaration + text.slice(prologue.length);
}

const modulePaths = {
  name: 'module-paths',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?js$/ }, async (args) => ({
      contents: withModulePaths(await fs.promises.readFile(args.path, 'utf8'), args.path),
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }));
  },
};

async function main() {
  fs.rmSync(outDir, { recursive: true, force: true });
  for (const { out, entry } of BUNDLES) {
    const result = await esbuild.build({
      entryPoints: [path.join(root, entry)],
      outfile: path.join(outDir, out),
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: `node${process.versions.node.split('.')[0]}`,
      // The addon is a binary node loads itself; the build's JSON (the schema) is read at run time.
      external: ['*.node'],
      sourcemap: 'linked',
      // The sources are in the checkout; with their text the map would be three times the size,
      // and a log line's first source location reads it.
      sourcesContent: false,
      banner: { js: BANNER },
      plugins: [modulePaths],
      logLevel: 'warning',
      metafile: true,
    });
    const modules = Object.keys(result.metafile.inputs).length;
    const bytes = fs.statSync(path.join(outDir, out)).size;
    process.stdout.write(`bundle: ${path.relative(root, path.join(outDir, out))}, ${modules} modules, ${Math.round(bytes / 1024)} KiB\n`);
  }
}

module.exports = { BUNDLES, withModulePaths };

if (require.main === module) {
  main().catch((error) => {
    process.stderr.write(`build-bundle: ${error.stack ?? String(error)}\n`);
    process.exit(1);
  });
}
