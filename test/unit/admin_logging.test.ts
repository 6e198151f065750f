import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loggingHandler, LOGGING_USAGE, parseLevelChange, renderLoggers } from '../../src/admin/logging_handler';
import { parseQuery } from '../../src/admin/query';
import type { LevelChange } from '../../src/log/level_change';

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
  let level: LevelChange['level'] = 'info';
  const handler = loggingHandler({
    levels: () => [{ name: 'http', level }],
    change: (c) => {
      changes.push(c);
      level = c.level;
    },
  });
  const call = (query: string) => handler.handle({ method: 'POST', path: '/logging', query: q(query), headers: {}, body: Buffer.alloc(0) });
  assert.deepEqual(await call('http=trace'), { status: 200, body: 'active loggers:\n  http: trace\n\n' });
  assert.deepEqual(await call('http=loud'), { status: 400, body: `${LOGGING_USAGE}active loggers:\n  http: trace\n\n` });
  assert.deepEqual(changes, [{ component: 'http', level: 'trace' }]);
});
