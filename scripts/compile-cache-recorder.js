// Loaded into every process of the build's recording run (NODE_OPTIONS=--require, set by
// scripts/build-compile-cache.js): compiles each module of the checkout as the proxy's compile
// cache does, and at exit writes the code of each, with what V8 compiled of it meanwhile, to
// $PROXY_COMPILE_CACHE_RECORD for the build to merge.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');
const { cacheFile, isCommonJs, loader, moduleScript, runModule, sourceHash } = require('../dist/src/common/compile_cache.js');

const root = path.resolve(__dirname, '..');
const out = process.env.PROXY_COMPILE_CACHE_RECORD;
const recorded = new Map();
const nodeCompile = loader.prototype._compile;

loader.prototype._compile = function (content, filename, format) {
  const relative = path.relative(root, filename);
  if (relative.startsWith('..') || !isCommonJs(format)) return nodeCompile.call(this, content, filename, format);
  let script;
  try {
    script = moduleScript(content, filename);
  } catch {
    // ES module syntax in a .js file node took for CommonJS (it retries it as a module), or a syntax error it will report.
    return nodeCompile.call(this, content, filename, format);
  }
  recorded.set(relative, { sourceHash: sourceHash(content), script });
  runModule(this, script, filename);
  return undefined;
};

process.on('exit', () => {
  const cache = new Map([...recorded].map(([relative, { sourceHash: hash, script }]) => [relative, { sourceHash: hash, data: script.createCachedData() }]));
  const flags = path.basename(cacheFile('', process.execArgv), '.bin');
  fs.writeFileSync(path.join(out, `${flags}.${process.pid}.part`), v8.serialize(cache));
});
