// Headless Debian chromium through playwright-core, for the admin pages' browser tests, and what
// a page did wrong: console errors and warnings (a content security policy violation is one),
// uncaught errors, failed responses, and `securitypolicyviolation` events.

import * as fs from 'node:fs';
import type { TestContext } from 'node:test';
import { Browser, chromium, Page } from 'playwright-core';

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

/** The browser, or null with the test skipped when chromium is not installed. */
export async function launchChromium(t: TestContext): Promise<Browser | null> {
  if (!fs.existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed: \`make test\` installs Debian's chromium package (scripts/install-test-deps.sh)`);
    return null;
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 });
}

/**
 * Collects `page`'s problems into the array returned, from now on. `expectedStatus` lists URLs
 * (as regular expressions) whose 4xx/5xx answer a test asks for on purpose.
 */
export async function watchProblems(page: Page, expectedStatus: readonly RegExp[] = []): Promise<string[]> {
  const problems: string[] = [];
  const expected = (url: string) => expectedStatus.some((re) => re.test(url));
  page.on('console', (m) => {
    if (m.type() !== 'error' && m.type() !== 'warning') return;
    // Chromium logs every 4xx/5xx answer too, naming its URL as the message's location.
    if (m.text().startsWith('Failed to load resource') && expected(m.location().url)) return;
    problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400 && !expected(r.url())) problems.push(`${r.status()} for ${r.url()}`);
  });
  // Injected by the browser's debugging protocol, so the page's own policy does not apply to it.
  await page.exposeFunction('reportCspViolation', (text: string) => problems.push(`csp violation: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as unknown as { reportCspViolation(text: string): void }).reportCspViolation(`${e.violatedDirective} blocked ${e.blockedURI}`);
    });
  });
  return problems;
}
