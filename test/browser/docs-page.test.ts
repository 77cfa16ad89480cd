/**
 * The /docs page rendered by headless Chromium. Without Chromium `npm test`
 * reports this file skipped; with `BATON_REQUIRE_BROWSER=1` (as `.ci/run`
 * sets) it fails instead, so CI cannot go green without the page being seen.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './chromium.js';
import { buildTestApp, type TestApp } from '../support/app.js';



const available = chromiumAvailable('the /docs page in a real browser', 'docs page');

describe.runIf(available)('the /docs page in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    t = await buildTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
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
