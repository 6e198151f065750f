// `make bench-compare` refuses what it cannot compare before it builds or starts anything: no
// benchmark runs here, only the refusals, which must leave no worktree behind.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { runScript, type Exited } from '../helpers/cli_runs';
import { makeTempDir } from '../helpers/proxy_process';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const COMPARE = path.join(ROOT, 'dist', 'bench', 'compare.js');
const BOUNDED = { timeout: 30_000 };

/** Runs compare.js with its temporary directories in `tmp`, so that what it leaves there shows. */
function runCompare(args: readonly string[], tmp: string, env: NodeJS.ProcessEnv = {}): Promise<Exited> {
  return runScript(COMPARE, args, { cwd: ROOT, env: { ...process.env, ...env, TMPDIR: tmp } });
}

function worktreesUnder(dir: string): string[] {
  const listing = execFileSync('git', ['worktree', 'list', '--porcelain'], { cwd: ROOT, encoding: 'utf8' });
  return listing.split('\n').filter((line) => line.startsWith(`worktree ${dir}`));
}

test('an unknown revision is refused with exit 2, before any worktree exists', BOUNDED, async (t) => {
  const tmp = makeTempDir();
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const { code, stdout, stderr } = await runCompare(['no-such-revision-3f9a'], tmp);
  assert.equal(code, 2, stderr);
  assert.equal(stderr, "bench-compare: unknown revision 'no-such-revision-3f9a': git knows no commit of that name here\n");
  assert.equal(stdout, '');
  assert.deepEqual(fs.readdirSync(tmp), []);
  assert.deepEqual(worktreesUnder(tmp), []);
});

test('a missing revision, an option and a bad COMPARE_ROUNDS are refused with exit 2', BOUNDED, async (t) => {
  const tmp = makeTempDir();
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const missing = await runCompare([], tmp);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^bench-compare: usage: node dist\/bench\/compare\.js <revision>/);
  const option = await runCompare(['--work-tree=/'], tmp);
  assert.equal(option.code, 2);
  assert.match(option.stderr, /^bench-compare: '--work-tree=\/' is not a revision/);
  const rounds = await runCompare(['HEAD'], tmp, { COMPARE_ROUNDS: 'many' });
  assert.equal(rounds.code, 2);
  assert.equal(rounds.stderr, "bench-compare: COMPARE_ROUNDS must be a positive whole number, got 'many'\n");
  assert.deepEqual(fs.readdirSync(tmp), []);
  assert.deepEqual(worktreesUnder(tmp), []);
});
