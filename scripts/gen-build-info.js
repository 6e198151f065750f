#!/usr/bin/env node
// Bakes the source revision and tree status into dist/ at build time, so --version and
// /server_info report the build that is running rather than the checkout beside it.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
function git(args) {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

const sha = git(['rev-parse', 'HEAD']) || '0'.repeat(40);
const dirty = git(['status', '--porcelain', '--untracked-files=no']);
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const info = {
  revision: sha,
  // A build from a tagged release commit is a release; anything else is a development build.
  release: git(['describe', '--exact-match', '--tags', 'HEAD']) === `v${pkg.version}`,
  version: pkg.version,
  treeStatus: dirty === null ? 'Distribution' : dirty === '' ? 'Clean' : 'Modified',
  buildMode: process.env.PROXY_BUILD_MODE === 'DEBUG' ? 'DEBUG' : 'RELEASE',
};
fs.mkdirSync(path.join(root, 'dist'), { recursive: true });
fs.writeFileSync(path.join(root, 'dist', 'build_info.json'), JSON.stringify(info, null, 1) + '\n');
