// With fine-grain logging a line belongs to the source file that writes it, as Envoy's per-file
// loggers do: every module that writes lines takes its own file's logger (`forFile(__filename)`)
// from the one it is handed, or its lines would be listed and set under the module that made it.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { PACKAGE_ROOT } from '../../src/log/source_location';

function sourceFiles(directory: string): string[] {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

test('every module of src/ that writes log lines takes its own file logger', () => {
  const logging = path.join(PACKAGE_ROOT, 'src', 'log');
  const writers = sourceFiles(path.join(PACKAGE_ROOT, 'src'))
    .filter((file) => !file.startsWith(logging + path.sep))
    .filter((file) => /\.(trace|debug|info|warn|error|critical)\(/.test(fs.readFileSync(file, 'utf8')));
  assert.ok(writers.length > 20, `only ${writers.length} modules write lines`);
  const missing = writers.filter((file) => !fs.readFileSync(file, 'utf8').includes('.forFile(__filename)'));
  assert.deepEqual(missing.map((file) => path.relative(PACKAGE_ROOT, file)), []);
});
