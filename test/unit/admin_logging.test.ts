import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loggingHandler, LOGGING_USAGE, parseLevelChange, renderLoggers } from '../../src/admin/logging_handler';
import { parseFileLevelChange, renderFileLoggers } from '../../src/admin/fine_grain_logging_handler';
import { parseQuery } from '../../src/admin/query';
import type { ComponentLevelChange, LevelChange } from '../../src/log/level_change';

const q = (query: string) => parseQuery(query, false);

test('the query names one change, none, or is invalid', () => {
  assert.equal(parseLevelChange(q('')), null);
  assert.deepEqual(parseLevelChange(q('level=off')), { component: null, level: 'off' });
  assert.deepEqual(parseLevelChange(q('proxy_bug=critical')), { component: 'proxy_bug', level: 'critical' });
  for (const bad of ['level=warn', 'envoy_bug=info', 'http=', 'http', 'http=info&pool=info', 'LEVEL=info']) {
    assert.equal(parseLevelChange(q(bad)), 'invalid', bad);
  }
});

test("the listing is Envoy's: a header, two-space indented rows, a blank line", () => {
  assert.equal(renderLoggers([{ name: 'admin', level: 'info' }, { name: 'wasm', level: 'off' }]), 'active loggers:\n  admin: info\n  wasm: off\n\n');
});

test('the handler applies a valid change and lists after it; an invalid one changes nothing', async () => {
  const changes: LevelChange[] = [];
  let level: ComponentLevelChange['level'] = 'info';
  const handler = loggingHandler({
    levels: () => [{ name: 'http', level }],
    change: (c) => {
      changes.push(c);
      if (!('files' in c)) level = c.level;
    },
  });
  const call = (query: string) => handler.handle({ method: 'POST', path: '/logging', query: q(query), headers: {}, body: Buffer.alloc(0), role: null });
  assert.deepEqual(await call('http=trace'), { status: 200, body: 'active loggers:\n  http: trace\n\n' });
  assert.deepEqual(await call('http=loud'), { status: 400, body: `${LOGGING_USAGE}active loggers:\n  http: trace\n\n` });
  assert.deepEqual(changes, [{ component: 'http', level: 'trace' }]);
});

test('fine-grain: one path, several, or all; a path that names no file logger is invalid', () => {
  const known = new Set(['src/a.ts', 'src/b/c.ts']);
  assert.equal(parseFileLevelChange(q(''), known), null);
  assert.deepEqual(parseFileLevelChange(q('level=off'), known), { component: null, level: 'off' });
  assert.deepEqual(parseFileLevelChange(q('src/a.ts=debug'), known), { files: [['src/a.ts', 'debug']] });
  assert.deepEqual(parseFileLevelChange(q('paths=src/a.ts:trace,src/b/c.ts:error,'), known), { files: [['src/a.ts', 'trace'], ['src/b/c.ts', 'error']] });
  for (const bad of ['src/x.ts=debug', 'src/a.ts=loud', 'paths=src/a.ts', 'paths=src/a.ts:info,src/x.ts:info', 'http=info', 'level=warn', 'src/a.ts=info&level=info']) {
    assert.equal(parseFileLevelChange(q(bad), known), 'invalid', bad);
  }
});

test("fine-grain listing is Envoy's: three spaces, the path, the level's number, no blank line", () => {
  assert.equal(renderFileLoggers([{ name: 'src/a.ts', level: 'trace' }, { name: 'src/b.ts', level: 'off' }]), 'active loggers:\n   src/a.ts: 0\n   src/b.ts: 6\n');
});
