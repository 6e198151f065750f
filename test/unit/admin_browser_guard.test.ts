// Which browser requests the admin refuses, and which methods run what.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { browserRefusal, isAdminOrigin } from '../../src/admin/browser_guard';
import { methodVerdict } from '../../src/admin/method_rule';

const ADMIN = { port: 9901, addresses: new Set(['10.0.0.5']) };

test('origins: the bound address or a loopback name with the admin port, nothing else', () => {
  for (const o of ['http://10.0.0.5:9901', 'http://127.0.0.1:9901', 'http://localhost:9901', 'http://[::1]:9901', 'http://LOCALHOST:9901']) {
    assert.equal(isAdminOrigin(o, ADMIN), true, o);
  }
  for (const o of ['null', 'http://evil.example:9901', 'http://10.0.0.5', 'http://127.0.0.1:9902', 'http://10.0.0.6:9901', 'http://127.0.0.1:9901/x', 'file://']) {
    assert.equal(isAdminOrigin(o, ADMIN), false, o);
  }
});

test('only browser-marked requests are judged; mutations must be same-origin', () => {
  assert.equal(browserRefusal({ host: 'evil.example:9901' }, true, ADMIN), null, 'curl: no browser headers');
  assert.match(browserRefusal({ host: 'evil.example:9901', secFetchSite: 'same-origin' }, false, ADMIN)!, /does not name this admin/);
  assert.equal(browserRefusal({ host: '10.0.0.5:9901', secFetchSite: 'cross-site' }, false, ADMIN), null);
  assert.match(browserRefusal({ host: '10.0.0.5:9901', secFetchSite: 'cross-site' }, true, ADMIN)!, /cross-site/);
  assert.match(browserRefusal({ host: '10.0.0.5:9901', origin: 'http://a.example' }, true, ADMIN)!, /origin/);
  assert.equal(browserRefusal({ host: '10.0.0.5:9901', origin: 'http://10.0.0.5:9901', secFetchSite: 'same-origin' }, true, ADMIN), null);
});

test('methods: POST runs a mutation, GET runs it deprecated, nothing else does', () => {
  assert.deepEqual(methodVerdict('POST', true), { kind: 'run' });
  assert.deepEqual(methodVerdict('GET', true), { kind: 'run_deprecated' });
  for (const m of ['HEAD', 'OPTIONS', 'DELETE', 'PUT']) assert.equal(methodVerdict(m, true).kind, 'refuse', m);
  for (const m of ['GET', 'HEAD', 'POST']) assert.equal(methodVerdict(m, false).kind, 'run', m);
  assert.equal(methodVerdict('OPTIONS', false).kind, 'refuse');
});
