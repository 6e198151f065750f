// The operator dashboard on GET / in a real browser (Debian's chromium, driven by playwright-core):
// it fills every section from the admin's JSON with no console error and no content security
// policy violation; a host whose health check starts failing shows unhealthy within one refresh;
// a destructive button asks first; a viewer's page has no mutation and a forged POST
// /quitquitquit with the viewer's token gets 403 while the proxy keeps serving. A screenshot is
// kept in test-artifacts/ (git-ignored).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { launchChromium, watchProblems } from '../helpers/chromium';
import { httpListener } from '../helpers/config_fixtures';
import { startUpstream } from '../helpers/http_peers';
import { makeTempDir, request, RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const ARTIFACTS = path.resolve(__dirname, '..', '..', '..', 'test-artifacts');
const HOST_ROW = (port: number) => `#clusters-table tr[data-host='web 127.0.0.1:${port}'] [data-health]`;

/** The refresh period the page was served with. */
async function refreshMs(page: Page): Promise<number> {
  return Number(await page.getAttribute('#dashboard', 'data-refresh-ms'));
}

async function refreshed(page: Page): Promise<void> {
  await page.waitForFunction(() => document.getElementById('dash-status')?.textContent?.startsWith('refreshed') === true);
}

test('the dashboard in chromium: every section filled, a failing host unhealthy within one refresh, no CSP violation', { timeout: 120_000 }, async (t) => {
  const browser = await launchChromium(t);
  if (browser === null) return;
  let failing = false;
  const upstream = await startUpstream('web', (req, res) => {
    res.statusCode = failing && req.url === '/healthz' ? 503 : 200;
    res.end('up');
  });
  let proxy: RunningProxy | undefined;
  try {
    proxy = await startProxy({
      static_resources: {
        listeners: [
          httpListener('http_in', 0, [
            { match: { prefix: '/broken' }, direct_response: { status: 503 } },
            { match: { prefix: '/' }, route: { cluster: 'web' } },
          ]),
        ],
        clusters: [
          {
            name: 'web',
            connect_timeout: '1s',
            load_assignment: { cluster_name: 'web', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstream.port } } } }] }] },
            health_checks: [{ timeout: '1s', interval: '0.5s', no_traffic_interval: '0.5s', unhealthy_threshold: 1, healthy_threshold: 1, http_health_check: { path: '/healthz' } }],
          },
        ],
      },
    });
    const port = await proxy.listenerPort('http_in');
    assert.equal((await proxy.admin('/runtime_modify?dashboard.shown=42', 'POST')).status, 200);
    const traffic = async () => {
      for (let i = 0; i < 5; i++) assert.equal((await request(`http://127.0.0.1:${port}/`)).status, 200);
      assert.equal((await request(`http://127.0.0.1:${port}/broken`)).status, 503);
    };
    await traffic();

    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    page.setDefaultTimeout(15_000);
    const problems = await watchProblems(page);
    const served = await page.goto(`${proxy.adminUrl}/`);
    assert.equal(await page.title(), 'Proxy Admin');
    const csp = (await served!.allHeaders())['content-security-policy']!;
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-/);
    await refreshed(page);
    const period = await refreshMs(page);

    assert.equal(await page.innerText('#server-facts .fact-state'), 'live');
    assert.equal(await page.innerText('#server-facts .fact-restart-epoch'), '0');
    assert.equal(await page.innerText('#server-facts .fact-hot-restart-generation'), '1');
    assert.match(await page.innerText('#listeners-table tbody'), new RegExp(`^http_in\\s+127\\.0\\.0\\.1:${port}$`, 'm'));
    assert.match(await page.innerText('#runtime-table tbody'), /^dashboard\.shown\s+42$/m);
    await waitFor('the host healthy on the page', async () => ((await page.getAttribute(HOST_ROW(upstream.port), 'data-health')) === 'healthy' ? true : undefined));

    // A second poll after more traffic gives rates: lines in the request and 5xx charts.
    await traffic();
    await page.waitForFunction(() => document.querySelectorAll('#chart-rq polyline, #chart-5xx polyline').length >= 2, undefined, { timeout: 4 * period + 5000 });
    assert.match(await page.innerText('#clusters-table tbody'), /^web\s+127\.0\.0\.1:\d+\s+healthy\s+1\s+[\d.]+\s+(100%|–)$/m);
    assert.equal(await page.inputValue('#latency-histogram'), 'cluster.web.upstream_rq_time');

    // The stats table: a search narrows it, the non-zero box hides zeros.
    await page.fill('#stats-search', 'ingress_http.downstream_rq_');
    const names = await page.locator('#stats-table tbody td:first-child').allInnerTexts();
    assert.ok(names.length > 5 && names.every((n) => n.includes('ingress_http.downstream_rq_')), names.join(','));
    await page.fill('#stats-search', 'INGRESS_HTTP.downstream_rq_5xx');
    await page.check('#stats-nonzero');
    assert.deepEqual(await page.locator('#stats-table tbody td:first-child').allInnerTexts(), ['http.ingress_http.downstream_rq_5xx']);

    // The upstream fails its health checks: once the admin says so, the page says so within one refresh.
    failing = true;
    await waitFor('/clusters reporting failed_active_hc', async () => ((await proxy!.admin('/clusters')).body.includes('::health_flags::/failed_active_hc') ? true : undefined));
    const seen = Date.now();
    // One poll may be under way with the old answer; the next one starts `period` after it ends.
    await page.waitForSelector(`${HOST_ROW(upstream.port)}[data-health='unhealthy']`, { timeout: period + 2000 });
    t.diagnostic(`unhealthy on the page ${Date.now() - seen} ms after the admin reported it (refresh every ${period} ms)`);
    assert.equal(await page.innerText(HOST_ROW(upstream.port)), 'unhealthy: failed_active_hc');

    // quitquitquit asks first; declining leaves the proxy serving.
    const questions: string[] = [];
    page.once('dialog', (d) => {
      questions.push(d.message());
      void d.dismiss();
    });
    await page.click("form[action='quitquitquit'] button");
    assert.deepEqual(questions, ['Shut the server down?']);
    assert.equal((await proxy.admin('/ready')).status, 200);
    assert.equal(page.url(), `${proxy.adminUrl}/`);

    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const shot = path.join(ARTIFACTS, 'admin_dashboard.png');
    await page.screenshot({ path: shot, fullPage: true });
    t.diagnostic(`screenshot: ${shot}`);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    await proxy?.cleanup();
    await upstream.close();
  }
});

const TOKENS = { viewer: 'v13w3r-dashboard-0a1b2c3d4e5f60718293', operator: '0p3r4t0r-dashboard-a9b8c7d6e5f4', admin: '4dm1n-dashboard-ffeeddccbbaa9988' } as const;

function bearer(role: keyof typeof TOKENS): http.OutgoingHttpHeaders {
  return { authorization: `Bearer ${TOKENS[role]}` };
}

test('admin.security in chromium: each role sees the mutations it may use; a forged POST /quitquitquit with a viewer token is refused', { timeout: 120_000 }, async (t) => {
  const browser = await launchChromium(t);
  if (browser === null) return;
  const dir = makeTempDir();
  let proxy: RunningProxy | undefined;
  try {
    const bearerTokens = Object.entries(TOKENS).map(([role, token]) => {
      const file = path.join(dir, `${role}.token`);
      fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
      return { name: `${role}-token`, path: file, role: role.toUpperCase() };
    });
    const admin = { access_log_path: path.join(dir, 'admin_access.log'), address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, security: { bearer_tokens: bearerTokens } };
    proxy = await startProxy({ admin, static_resources: {} }, [], 15_000, {}, bearer('admin'));

    const mutations = async (role: keyof typeof TOKENS) => {
      const context = await browser.newContext({ extraHTTPHeaders: bearer(role) as Record<string, string> });
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      const problems = await watchProblems(page, role === 'viewer' ? [/\/quitquitquit$/] : []);
      await page.goto(`${proxy!.adminUrl}/`);
      await refreshed(page);
      const forms = await page.locator("form[method='post']").evaluateAll((all) => all.map((f) => f.getAttribute('action')));
      const reads = await page.locator('#endpoints a').allInnerTexts();
      return { context, page, problems, forms, reads };
    };

    const viewer = await mutations('viewer');
    assert.deepEqual(viewer.forms, []);
    assert.ok(viewer.reads.includes('stats') && !viewer.reads.includes('config_dump'), viewer.reads.join(','));
    // Hidden is only a courtesy: the page's own script posting with the viewer's token is refused.
    const forged = await viewer.page.evaluate(async () => {
      const r = await fetch('quitquitquit', { method: 'POST' });
      return { status: r.status, body: await r.text() };
    });
    assert.deepEqual(forged, { status: 403, body: 'role viewer may not use this endpoint (it needs admin)\n' });
    assert.equal((await proxy.admin('/ready')).status, 200);
    assert.equal(proxy.child.exitCode, null);
    assert.deepEqual(viewer.problems, []);
    await viewer.context.close();

    const operator = await mutations('operator');
    assert.ok(operator.forms.includes('reset_counters') && !operator.forms.includes('quitquitquit'), operator.forms.join(','));
    assert.deepEqual(operator.problems, []);
    await operator.context.close();

    const administrator = await mutations('admin');
    assert.ok(administrator.forms.includes('quitquitquit') && administrator.reads.includes('config_dump'), administrator.forms.join(','));
    assert.deepEqual(administrator.problems, []);
    await administrator.context.close();
  } finally {
    await browser.close();
    await proxy?.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
