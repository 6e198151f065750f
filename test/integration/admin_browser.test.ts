// The admin home page in a real browser (Debian's chromium, driven by playwright-core): follow
// the /stats link, come back, press reset_counters and see a counter read 0, with nothing on
// the console (a content security policy violation is reported there as an error).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { test } from 'node:test';
import { chromium } from 'playwright-core';
import { httpListener } from '../helpers/config_fixtures';
import { request, RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const CHROMIUM = '/usr/bin/chromium';
// Chromium's own traffic (updates, sync, QUIC probes) has nowhere to go on a closed network.
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const COUNTER = 'http.ingress_http.downstream_rq_total';

test('the home page works in chromium: a link, a POST button, and no console errors', { timeout: 90_000 }, async (t) => {
  if (!fs.existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed: \`make test\` installs Debian's chromium package (scripts/install-test-deps.sh)`);
    return;
  }
  let proxy: RunningProxy | undefined;
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 });
  try {
    proxy = await startProxy({
      static_resources: {
        listeners: [httpListener('http_in', 0, [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'hi' } } }])],
        clusters: [],
      },
    });
    const port = await proxy.listenerPort('http_in');
    for (let i = 0; i < 3; i++) assert.equal((await request(`http://127.0.0.1:${port}/`)).status, 200);
    await waitFor(COUNTER, async () => ((await proxy!.stat(COUNTER)) === 3 ? true : undefined));

    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${r.status()} for ${r.url()}`);
    });

    await page.goto(`${proxy.adminUrl}/`);
    assert.equal(await page.title(), 'Proxy Admin');
    await Promise.all([page.waitForURL(`${proxy.adminUrl}/stats`), page.click("a[href='stats']")]);
    assert.match(await page.innerText('body'), new RegExp(`^${COUNTER.replace(/\./g, '\\.')}: 3$`, 'm'));
    await page.goBack();
    await Promise.all([page.waitForURL(`${proxy.adminUrl}/reset_counters`), page.click("form[action='reset_counters'] button")]);
    assert.equal((await page.innerText('body')).trim(), 'OK');
    await page.goBack();
    await Promise.all([page.waitForURL(`${proxy.adminUrl}/stats`), page.click("a[href='stats']")]);
    assert.match(await page.innerText('body'), new RegExp(`^${COUNTER.replace(/\./g, '\\.')}: 0$`, 'm'));
    // The /stats form's filter field.
    await page.goBack();
    await page.fill("form[action='stats'] input[name='filter']", 'downstream_rq_total$');
    await Promise.all([page.waitForURL(/\/stats\?/), page.click("form[action='stats'] button")]);
    assert.ok((await page.innerText('body')).split('\n').filter(Boolean).every((l) => /downstream_rq_total: \d+$/.test(l)));
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    await proxy?.cleanup();
  }
});
