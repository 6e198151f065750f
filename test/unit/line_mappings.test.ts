// A source map's mappings read by line (src/log/line_mappings.ts): every place finds what Node's
// SourceMap.findEntry finds, on hand-made mappings and on the build's own maps (the bundles' and
// a tsc one), whose lines the processes' log lines are located by.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import * as path from 'node:path';
import { test } from 'node:test';
import { LineMappings } from '../../src/log/line_mappings';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** What Node's SourceMap finds at a place, in LineMappings' terms. */
function nodeFinds(map: SourceMap, sources: readonly string[], line: number, column: number): { source: number; line: number } | null {
  const entry = map.findEntry(line, column) as { originalSource?: string; originalLine?: number };
  if (entry.originalSource === undefined || entry.originalLine === undefined) return null;
  return { source: sources.indexOf(entry.originalSource), line: entry.originalLine };
}

function agreesWithNode(payload: SourceMapPayload, places: readonly [number, number][]): void {
  const node = new SourceMap(payload);
  const ours = new LineMappings(payload.mappings);
  for (const [line, column] of places) {
    assert.deepEqual(ours.find(line, column), nodeFinds(node, payload.sources, line, column), `line ${line}, column ${column}`);
  }
}

test('hand-made mappings: segments across lines, an unmapped segment, a line before its first segment, past the end', () => {
  // Line 0: col 0 -> a:0, col 4 -> b:2 (name), col 10 unmapped; line 1: empty; line 2: col 6 -> b:5; line 3: col 0 -> a:1.
  const payload: SourceMapPayload = {
    version: 3, file: 'out.js', sourceRoot: '', sources: ['a.ts', 'b.ts'], sourcesContent: [], names: ['n'],
    mappings: 'AAAA,ICEAA,M;;MAGA;ADJA',
  };
  const places: [number, number][] = [];
  for (let line = 0; line < 6; line++) for (let column = 0; column < 14; column++) places.push([line, column]);
  agreesWithNode(payload, places);
  const ours = new LineMappings(payload.mappings);
  assert.deepEqual(ours.find(0, 5), { source: 1, line: 2 });
  assert.equal(ours.find(0, 11), null, 'the unmapped segment');
  assert.equal(ours.find(1, 0), null, 'after the unmapped segment, a line without segments maps nowhere');
  assert.deepEqual(ours.find(2, 7), { source: 1, line: 5 });
  assert.equal(ours.find(2, 3), null, 'before its first segment: the segment before, the unmapped one');
  assert.deepEqual(ours.find(3, 0), { source: 0, line: 1 });
});

test("the build's maps: the bundles' and a tsc one, at every 97th line and a spread of columns", () => {
  const files = [path.join(ROOT, 'dist', 'bundle', 'proxy.js.map'), path.join(ROOT, 'dist', 'bundle', 'worker.js.map'), path.join(ROOT, 'dist', 'src', 'log', 'source_location.js.map')];
  for (const file of files) {
    const payload = JSON.parse(fs.readFileSync(file, 'utf8')) as SourceMapPayload;
    const lines = payload.mappings.split(';').length;
    const places: [number, number][] = [];
    for (let line = 0; line < lines + 2; line += 97) for (const column of [0, 3, 8, 17, 40, 120]) places.push([line, column]);
    agreesWithNode(payload, places);
  }
});

test('a mappings string with a character that is not base64 is refused', () => {
  assert.throws(() => new LineMappings('AAAA,A!AA'), /not base64 at 6/);
});
