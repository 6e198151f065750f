// The README is the front door: short, with the two commands, and every document it or docs/
// points at exists. Links are checked as GitHub renders them: a relative target is a file of
// the checkout, and a `#fragment` names a heading of that file.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const README = path.join(ROOT, 'README.md');
const MAX_README_LINES = 300;

function markdownFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join(dir, name));
}

/** Text outside fenced code blocks: a link-like string in an example is not a link. */
function prose(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
}

/** The targets of `[text](target)` links. */
function linkTargets(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}

/** Repository paths a text names in code spans, such as `docs/xds.md` or `bench/README.md`. */
function namedDocuments(text: string): string[] {
  return [...prose(text).matchAll(/`((?:docs|bench)\/[\w./-]+\.md)(?:#[\w-]+)?`/g)].map((m) => m[1]!);
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const headings = [...prose(fs.readFileSync(file, 'utf8')).matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => m[1]!);
  return new Set(headings.map(anchorOf));
}

/** What is wrong with `target`, a link in `file`; null when it resolves. */
function brokenLink(file: string, target: string): string | null {
  if (/^[a-z]+:/i.test(target)) return null;
  const [filePart, fragment] = target.split('#', 2) as [string, string | undefined];
  const resolved = filePart === '' ? file : path.resolve(path.dirname(file), filePart);
  if (!resolved.startsWith(ROOT + path.sep)) return `${target} leaves the repository`;
  if (!fs.existsSync(resolved)) return `${target}: no such file`;
  if (fragment !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(fragment)) {
    return `${target}: no heading #${fragment} in ${path.relative(ROOT, resolved)}`;
  }
  return null;
}

function brokenLinks(file: string): string[] {
  return linkTargets(fs.readFileSync(file, 'utf8'))
    .map((target) => brokenLink(file, target))
    .filter((problem): problem is string => problem !== null)
    .map((problem) => `${path.relative(ROOT, file)}: ${problem}`);
}

test(`README.md is at most ${MAX_README_LINES} lines and shows make run and make test`, () => {
  const text = fs.readFileSync(README, 'utf8');
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  assert.ok(lines <= MAX_README_LINES, `README.md has ${lines} lines; move detail to docs/`);
  assert.ok(text.includes('make run'), 'README.md does not show `make run`');
  assert.ok(text.includes('make test'), 'README.md does not show `make test`');
});

test('README.md links only documents that exist', () => {
  assert.deepEqual(brokenLinks(README), []);
  const missing = namedDocuments(fs.readFileSync(README, 'utf8')).filter((doc) => !fs.existsSync(path.join(ROOT, doc)));
  assert.deepEqual(missing, [], 'documents README.md names that do not exist');
});

test('every relative link of docs/ and docs/architecture/ resolves', () => {
  const files = [...markdownFiles(path.join(ROOT, 'docs')), ...markdownFiles(path.join(ROOT, 'docs', 'architecture'))];
  assert.deepEqual(files.flatMap(brokenLinks), []);
});

test('no document sends the reader outside the repository to ../shared', () => {
  const files = [README, path.join(ROOT, 'bench', 'README.md'), ...markdownFiles(path.join(ROOT, 'docs')), ...markdownFiles(path.join(ROOT, 'docs', 'architecture'))];
  const offenders = files.filter((file) => fs.readFileSync(file, 'utf8').includes('../shared'));
  assert.deepEqual(offenders.map((file) => path.relative(ROOT, file)), []);
});
