#!/usr/bin/env node
'use strict';
// The Node.js version check, against package.json's "engines": one clear line instead of a stack
// trace from a dependency (yargs 18 is an ES module that CommonJS can require only from 20.19).
// Run directly by the Makefile; required by bin/proxy before anything else loads.
// It uses nothing newer than Node 10, so that old versions get as far as the message.

const path = require('path');

function minimumVersion() {
  const engines = require(path.join(__dirname, '..', 'package.json')).engines.node;
  const match = /^>=\s*(\d+)\.(\d+)/.exec(engines);
  if (!match) throw new Error(`package.json: engines.node: expected ">=MAJOR.MINOR", got "${engines}"`);
  return [Number(match[1]), Number(match[2])];
}

/** Exits 1 with one line on stderr when this Node.js is older than the project supports. */
function exitUnlessSupported(program) {
  const [major, minor] = minimumVersion();
  const [ownMajor, ownMinor] = process.versions.node.split('.').map(Number);
  if (ownMajor > major || (ownMajor === major && ownMinor >= minor)) return;
  process.stderr.write(`${program}: Node.js ${major}.${minor} or later is required; this is v${process.versions.node} (${process.execPath})\n`);
  process.exit(1);
}

module.exports = { exitUnlessSupported };

if (require.main === module) exitUnlessSupported(process.argv[2] || 'make');
