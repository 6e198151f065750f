// The profile summary of `make bench-profile`: self time per place, shares and microseconds per
// request, places mapped through the source maps (the processes run bundles).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { formatProfileSummary, summarizeCpuProfile, type CpuProfile } from '../../bench/profile_summary';
import { sourceMapPlaces } from '../../bench/source_map_places';

const frame = (functionName: string, url: string, lineNumber: number) => ({ functionName, url, lineNumber });

// Three nodes; each sample's time is the delta after it (the first delta is the profile's start).
const PROFILE: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)', '', -1) },
    { id: 2, callFrame: frame('decodeHeaders', 'file:///work/main/dist/src/filters/http/router.js', 41) },
    { id: 3, callFrame: frame('', 'node:net', 9) },
  ],
  samples: [2, 3, 2, 2, 1],
  timeDeltas: [500, 100, 200, 100, 100, 0],
};

test('self time per place: each sample charged the delta after it, largest first, shares of the total', () => {
  const summary = summarizeCpuProfile(PROFILE, 10);
  assert.equal(summary.totalUs, 500);
  assert.deepEqual(
    summary.entries.map((e) => [e.where, e.selfUs, e.share]),
    [
      ['decodeHeaders src/filters/http/router.js:42', 300, 0.6],
      ['(anonymous) node:net:10', 200, 0.4],
      ['(root)', 0, 0],
    ],
  );
  assert.equal(summarizeCpuProfile(PROFILE, 1).entries.length, 1);
});

test('the table gives each entry its share and microseconds per request', () => {
  const text = formatProfileSummary(summarizeCpuProfile(PROFILE, 1), 100);
  assert.equal(text, 'sampled 1 ms over 100 requests\n\n   self  us/req  function and place\n 60.00%   3.000  decodeHeaders src/filters/http/router.js:42\n');
  assert.match(formatProfileSummary(summarizeCpuProfile(PROFILE, 1), 0), / 60\.00%       -  decodeHeaders/);
});

test('a place a source map covers is shown as the line it names', () => {
  const original = (url: string, line: number) => (url.endsWith('/router.js') && line === 41 ? 'src/filters/http/router.ts:57' : null);
  assert.deepEqual(
    summarizeCpuProfile(PROFILE, 2, original).entries.map((e) => e.where),
    ['decodeHeaders src/filters/http/router.ts:57', '(anonymous) node:net:10'],
  );
});

test("source map places: a bundle's function is the .ts line that declares it", () => {
  const root = path.resolve(__dirname, '..', '..', '..');
  const bundle = path.join(root, 'dist', 'bundle', 'worker.js');
  const lines = fs.readFileSync(bundle, 'utf8').split('\n');
  const generated = lines.findIndex((line) => /^\s+function parseHeaderFields\(/.test(line));
  assert.ok(generated > 0, 'the worker bundle declares parseHeaderFields');
  const source = fs.readFileSync(path.join(root, 'src', 'http', 'http1', 'header_fields.ts'), 'utf8').split('\n');
  const declared = source.findIndex((line) => line.startsWith('export function parseHeaderFields('));
  const column = lines[generated]!.indexOf('function');
  const places = sourceMapPlaces(root);
  assert.equal(places(pathToFileURL(bundle).href, generated, column), `src/http/http1/header_fields.ts:${declared + 1}`);
  assert.equal(places('node:net', 9, 0), null);
});
