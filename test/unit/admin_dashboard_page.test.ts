// The dashboard page's server side: the endpoint table per role (hidden is a courtesy; the
// server's check is tested in admin_auth and admin_dashboard), the confirmation marks, escaping,
// and the browser script being one self-contained function.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AdminHandler } from '../../src/admin/admin_server';
import { renderDashboardPage } from '../../src/admin/dashboard/dashboard_page';
import { dashboardScript } from '../../src/admin/dashboard/dashboard_script';
import { renderEndpointTable } from '../../src/admin/dashboard/endpoint_table';

function handler(path: string, mutatesState: boolean, help = `help of ${path}`): AdminHandler {
  return { path, help, mutatesState, decodeQuery: false, handle: () => ({ status: 200, body: '' }) };
}

const HANDLERS = [
  handler('/', false),
  handler('/stats', false),
  handler('/config_dump', false),
  handler('/reset_counters', true),
  handler('/reopen_logs', true),
  handler('/quitquitquit', true),
];

function targets(html: string): string[] {
  return [...html.matchAll(/<(?:a href|form action)='([^']+)'/g)].map((m) => m[1]!);
}

test('each role is shown the endpoints it may use; without admin.security, all of them', () => {
  assert.deepEqual(targets(renderEndpointTable(HANDLERS, null)), ['config_dump', 'quitquitquit', 'reopen_logs', 'reset_counters', 'stats']);
  assert.deepEqual(targets(renderEndpointTable(HANDLERS, 'admin')), ['config_dump', 'quitquitquit', 'reopen_logs', 'reset_counters', 'stats']);
  assert.deepEqual(targets(renderEndpointTable(HANDLERS, 'operator')), ['reopen_logs', 'reset_counters', 'stats']);
  assert.deepEqual(targets(renderEndpointTable(HANDLERS, 'viewer')), ['stats']);
});

test('destructive mutations ask for confirmation; others do not', () => {
  const html = renderEndpointTable(HANDLERS, null);
  assert.match(html, /<form action='quitquitquit' method='post' class='home-form' id='form-quitquitquit' data-confirm='Shut the server down\?'>/);
  assert.match(html, /<form action='reset_counters' method='post' class='home-form' id='form-reset_counters' data-confirm='Reset every counter to 0\?'>/);
  assert.match(html, /<form action='reopen_logs' method='post' class='home-form' id='form-reopen_logs'>/);
});

test('text from handlers is escaped', () => {
  const html = renderDashboardPage([handler('/x', false, `<img src=x onerror='alert(1)'>`)], null);
  assert.match(html, /&lt;img src=x onerror=&#39;alert\(1\)&#39;&gt;/);
  assert.doesNotMatch(html, /<img/);
});

test('the page loads its script and style from the admin and carries its refresh period', () => {
  const html = renderDashboardPage(HANDLERS, 'viewer');
  assert.match(html, /<link rel='stylesheet' href='dashboard.css'><script src='dashboard.js' defer><\/script>/);
  assert.match(html, /<main id='dashboard' data-refresh-ms='\d+'>/);
});

test('the browser script is one function that names nothing from its module', () => {
  const script = dashboardScript();
  assert.doesNotThrow(() => new Function(script));
  // tsc writes an imported name as `<module>_1.name`, and exports as `exports.name`.
  assert.doesNotMatch(script, /\brequire\(|\bexports\b|\b\w+_1\./);
});
