// The admin home page's endpoint table in a real browser (Debian's chromium, driven by
// playwright-core): follow the /stats link, come back, press reset_counters, confirm, and see a
// counter read 0, with nothing on the console (a content security policy violation is reported
// there as an error). The dashboard above the table: admin_dashboard.test.ts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launchChromium, watchProblems } from '../helpers/chromium';
import { httpListener } from '../helpers/config_fixtures';
import { request, RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const COUNTER = 'http.ingress_http.downstream_rq_total';

test('the home page works in chromium: a link, a POST button, and no console errors', { timeout: 90_000 }, async (t) => {
  const browser = await launchChromium(t);
  if (browser === null) return;
  let proxy: RunningProxy | undefined;
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
    const problems = await watchProblems(page);

    await page.goto(`${proxy.adminUrl}/`);
    assert.equal(await page.title(), 'Proxy Admin');
    await Promise.all([page.waitForURL(`${proxy.adminUrl}/stats`), page.click("a[href='stats']")]);
    assert.match(await page.innerText('body'), new RegExp(`^${COUNTER.replace(/\./g, '\\.')}: 3$`, 'm'));
    await page.goBack();
    // A destructive form asks first (the dashboard's script); accepting it posts the form.
    const questions: string[] = [];
    page.once('dialog', (d) => {
      questions.push(d.message());
      void d.accept();
    });
    await Promise.all([page.waitForURL(`${proxy.adminUrl}/reset_counters`), page.click("form[action='reset_counters'] button")]);
    assert.deepEqual(questions, ['Reset every counter to 0?']);
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
