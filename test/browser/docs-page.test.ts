/**
 * The /docs page rendered by headless Chromium. Without Chromium `npm test`
 * reports this file skipped; with `BATON_REQUIRE_BROWSER=1` (as `.ci/run`
 * sets) it fails instead, so CI cannot go green without the page being seen.
 */
import { accessSync, constants } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const REQUIRED = process.env.BATON_REQUIRE_BROWSER === '1';
const MISSING = `no executable Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const available = executable(CHROMIUM);
if (!available && !REQUIRED) console.log(`[docs page] skipped: ${MISSING}`);

if (!available && REQUIRED) {
  describe('the /docs page in a real browser', () => {
    it('needs Chromium', () => {
      throw new Error(`BATON_REQUIRE_BROWSER=1, but ${MISSING}.`);
    });
  });
}

describe.runIf(available)('the /docs page in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    t = await buildTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('renders the API reference with its operations, loading nothing from outside', async () => {
    const page = await browser.newPage();
    const outside: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(base)) outside.push(request.url());
    });
    await page.goto(`${base}/docs`);
    await page.getByText('/v1/checkpoints/{id}/finalize').first().waitFor({ timeout: 15_000 });
    const text = await page.locator('body').innerText();
    expect(text).toContain('Create a checkpoint');
    expect(text).toContain('/v1/tasks/{taskId}/audit/verify');
    expect(outside).toEqual([]);
    if (process.env.DOCS_SCREENSHOT) await page.screenshot({ path: process.env.DOCS_SCREENSHOT });
  });
});
