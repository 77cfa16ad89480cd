/**
 * The console (/console) driven in headless Chromium against a real server
 * on a socket, over a task that went through a handoff and a recovery and
 * whose data was then damaged on disk (console-scenario.ts). One browser and
 * one server for the file; the views are visited in order with one tab, as a
 * person would, and each is checked with axe-core at 1280×800 and 390×844.
 *
 * Without Chromium `npm test` reports this file skipped; with
 * `BATON_REQUIRE_BROWSER=1` (as `.ci/run` sets) it fails instead.
 * `BATON_CONSOLE_SCREENSHOTS=1` (`npm run screenshots:console`) writes the
 * screenshots of docs/console.md into docs/console/; otherwise they go to
 * the temporary directory, so a test run leaves the checkout as it was.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateSigner } from '../../src/service/signing.js';
import { chromiumAvailable, launchChromium } from './chromium.js';
import { buildTestApp, checkpointBody, TOKENS, type TestApp } from '../support/app.js';
import { seriousViolations } from './axe.js';
import { apiCaller, writeScenario, type Scenario } from './console-scenario.js';

const SHOTS = process.env.BATON_CONSOLE_SCREENSHOTS === '1' ? 'docs/console' : join(tmpdir(), 'baton-console-screenshots');
const WIDE = { width: 1280, height: 800 };
const NARROW = { width: 390, height: 844 };
/** Room for a machine running the whole suite at once. */
const POLL = { timeout: 10_000 };


const available = chromiumAvailable('the console in a real browser', 'console');

describe.runIf(available)('the console in a real browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let s: Scenario;
  const errors: { text: string; url: string }[] = [];
  const requests: { url: string; headers: Record<string, string> }[] = [];

  /** No serious or critical axe violation, and no sideways scrolling of the page, at both sizes. */
  async function accessible(what: string): Promise<void> {
    for (const size of [WIDE, NARROW]) {
      await page.setViewportSize(size);
      const scrollWidth = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      expect(scrollWidth, `${what} at ${size.width}×${size.height} scrolls sideways`).toBeLessThanOrEqual(size.width);
      expect(await seriousViolations(page), `${what} at ${size.width}×${size.height}`).toEqual([]);
    }
    await page.setViewportSize(WIDE);
  }

  async function shoot(name: string, fullPage = true): Promise<void> {
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
  }

  async function visit(path: string): Promise<void> {
    await page.goto(`${base}${path}`);
  }

  const signerDir = join(tmpdir(), `baton-console-key-${process.pid}`);

  beforeAll(async () => {
    t = await buildTestApp({ app: { signer: loadOrCreateSigner(join(signerDir, 'signing-key.pem')) } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    s = await writeScenario(t, base);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: WIDE });
    page.setDefaultTimeout(15_000);
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push({ text: message.text(), url: message.location().url });
    });
    page.on('pageerror', (error) => errors.push({ text: `uncaught: ${error.message}`, url: '' }));
    page.on('request', (request) => requests.push({ url: request.url(), headers: request.headers() }));
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    rmSync(signerDir, { recursive: true, force: true });
  });

  it('asks for a token in the field labelled Token, refuses a wrong one, and keeps it out of every address', async () => {
    await visit('/console');
    const field = page.getByLabel('Token', { exact: true });
    await field.waitFor();
    await accessible('the token form');
    await field.fill('not-a-token-of-this-service');
    await field.press('Enter');
    await page.getByText('The service refused the token (401)').waitFor();
    await field.fill(TOKENS.auditor);
    await page.getByRole('button', { name: 'Use this token' }).click();
    await page.getByRole('heading', { name: 'Newest checkpoints' }).waitFor();
    expect(await page.evaluate('sessionStorage.getItem("baton.console.token")')).toBe(TOKENS.auditor);
    expect(await page.evaluate('localStorage.length')).toBe(0);
    expect(page.url()).toBe(`${base}/console`);
  });

  it('keeps what was typed in the filters while the newest checkpoints are still loading', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const listing = (url: URL): boolean => url.pathname === '/v1/checkpoints';
    await page.route(listing, async (route) => {
      await held;
      await route.continue();
    });
    try {
      await visit('/console');
      const filters = page.getByRole('form', { name: 'Search filters' });
      await filters.getByLabel('Agent id').fill('agent-c');
      await filters.getByLabel('Phase').selectOption('complete');
      release();
      await page.getByRole('region', { name: 'Search results' }).locator('tbody tr').first().waitFor();
      expect(await filters.getByLabel('Agent id').inputValue()).toBe('agent-c');
      expect(await filters.getByLabel('Phase').inputValue()).toBe('complete');
    } finally {
      release();
      await page.unroute(listing);
    }
  });

  it('searches with the filters of GET /v1/checkpoints, a page at a time', async () => {
    await page.getByLabel('Task id', { exact: true }).first().waitFor();
    const filters = page.getByRole('form', { name: 'Search filters' });
    await filters.getByLabel('Task id').fill(s.task);
    await filters.getByLabel('Agent id').fill('agent-c');
    await filters.getByLabel('Phase').selectOption('complete');
    await filters.getByLabel('Status', { exact: true }).selectOption('finalized');
    await filters.getByLabel('Final status').selectOption('completed');
    await filters.getByLabel('Labels, one').fill('team=core');
    await filters.getByLabel('Words').fill('reviewed CLI');
    await filters.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/agentId=agent-c/);
    const rows = page.getByRole('region', { name: 'Search results' }).locator('tbody tr');
    await expect.poll(() => rows.count(), POLL).toBe(1);
    expect(await rows.first().innerText()).toContain('agent-c');
    expect(new URL(page.url()).searchParams.get('label.team')).toBe('core');
    // agent-b's corrupted checkpoint has these words too: it is withheld, and named.
    expect(await page.getByText('Withheld because they no longer match their hash').innerText()).toContain(String(s.corrupted.id).slice(-4));
    await accessible('search results');

    // Three readable checkpoints of the task, two a page; the corrupt one is withheld and named.
    await visit(`/console?taskId=${s.task}&limit=2`);
    await expect.poll(() => rows.count(), POLL).toBe(2);
    const pageOne = await rows.allInnerTexts();
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByRole('heading', { name: 'Results, page 2' }).waitFor();
    await expect.poll(() => rows.count(), POLL).toBe(1);
    expect(pageOne).not.toContain((await rows.allInnerTexts())[0]);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await expect.poll(() => rows.allInnerTexts(), POLL).toEqual(pageOne);
  });

  it('draws the task timeline: checkpoints per agent, the handoff, the recovery, leases with epochs, the broken checkpoint', async () => {
    await visit(`/console/tasks/${s.task}`);
    const chart = page.locator('svg.timeline');
    await chart.waitFor();
    const text = await chart.textContent();
    expect(text).toContain('handoff · context_limit');
    expect(text).toContain('recovery (crash)');
    expect(text).toContain('recovered by agent-c');
    for (const epoch of [1, 2, 4]) expect(text).toContain(`epoch ${epoch}`);
    const lanes = await chart.locator('.lane-label').allTextContents();
    expect(lanes).toEqual(['agent-a', 'agent-b', 'agent-c']);
    const points = chart.locator('a.point');
    expect(await points.count()).toBe(4);
    const broken = chart.locator(`a.point[data-checkpoint="${s.corrupted.id}"]`);
    expect(await broken.getAttribute('aria-label')).toContain('Broken checkpoint');
    expect(await broken.textContent()).toContain('broken');

    const handoffs = page.getByRole('region', { name: 'Handoffs' });
    expect(await handoffs.innerText()).toMatch(/context_limit\s+agent-a → agent-b\s+acknowledged/);
    const recoveries = await page.getByRole('region', { name: 'Recoveries and blocks' }).innerText();
    expect(recoveries).toContain('recovery initiated');
    expect(recoveries).toContain('agent-b stopped answering');
    expect(recoveries).toContain('recovery completed');
    const leases = await page.getByRole('region', { name: 'Leases' }).innerText();
    expect(leases).toMatch(/agent-a\s+1[\s\S]*released/);
    expect(leases).toMatch(/agent-b\s+2[\s\S]*revoked/);
    expect(leases).toMatch(/agent-c\s+4[\s\S]*still held/);
    expect(await page.locator('.summary').first().innerText()).toMatch(/held by agent-c, epoch 4/);
    await shoot('timeline');
    await accessible('the timeline');

    await page.setViewportSize(NARROW);
    await page.locator('#timeline-heading').evaluate((heading) => heading.scrollIntoView());
    await shoot('timeline-narrow', false);
    await page.setViewportSize(WIDE);

    // Followed live, the timeline takes in a checkpoint written now, without reloading the page.
    await page.getByLabel('Follow live').check();
    await expect.poll(() => page.getByTestId('follow-state').getAttribute('data-state'), POLL).toBe('live');
    const next = await apiCaller(base)('POST', '/v1/checkpoints', checkpointBody(s.task, { agentId: 'agent-c', parentId: s.recovered.id }), { 'baton-lease-epoch': '4' });
    await expect.poll(() => points.count(), POLL).toBe(5);
    expect(await chart.locator(`a.point[data-checkpoint="${next.id}"]`).getAttribute('aria-label')).toContain('by agent-c');

    // Each point is a link to its checkpoint, reached and followed with the keyboard.
    await chart.locator(`a.point[data-checkpoint="${s.recovered.id}"]`).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(`${base}/console/checkpoints/${s.recovered.id}`);
    await page.getByTestId('hash-verdict').waitFor();
  });

  it('lays a checkpoint out for reading, recomputes its hash in the browser and checks its signature', async () => {
    await visit(`/console/checkpoints/${s.recovered.id}`);
    await page.getByTestId('hash-verdict').waitFor();
    expect(await page.getByTestId('stored-hash').textContent()).toBe(s.recovered.compliance.hash);
    expect(await page.getByTestId('recomputed-hash').textContent()).toBe(s.recovered.compliance.hash);
    expect(await page.getByTestId('hash-verdict').textContent()).toContain('The hashes match');
    await expect.poll(() => page.getByTestId('signature-verdict').textContent(), POLL).toMatch(/^✓ valid with the published key/);
    const body = await page.locator('main').innerText();
    expect(body).toContain('approval');
    expect(body).toContain(s.recovered.compliance.signature!.signer);
    expect(body).toMatch(/Done \(2\)[\s\S]*reviewed the CLI/);
    expect(body).toMatch(/use LMDB\s+embedded, durable/);
    expect(body).toContain('src/parser.ts');
    await page.getByTestId('resume-prompt').waitFor();
    expect(await page.getByTestId('resume-prompt').innerText()).toContain('reviewed the CLI');
    await accessible('a checkpoint');
  });

  it('shows what changed between two versions', async () => {
    await visit(`/console/checkpoints/${s.first.id}`);
    await page.getByRole('form', { name: 'Compare two versions' }).waitFor();
    await page.getByLabel('Compare version').selectOption('1');
    await page.getByLabel('with version').selectOption('2');
    await page.getByRole('button', { name: 'Show changes' }).click();
    const diff = page.getByRole('region', { name: 'Changes from version 1 to version 2' });
    await diff.waitFor();
    const phase = diff.locator('tr', { has: page.locator('th', { hasText: /^executionState\.phase$/ }) });
    expect(await phase.innerText()).toMatch(/changed\s+implementing\s+testing/);
    expect(await diff.innerText()).toContain('executionState.currentFocus');
    await shoot('checkpoint');
    await accessible('a revision diff');
  });

  it('shows a checkpoint corrupted on disk as broken', async () => {
    await visit(`/console/checkpoints/${s.corrupted.id}`);
    await page.getByTestId('broken').waitFor();
    expect(await page.getByTestId('broken').innerText()).toContain('no longer matches its hash');
    const revisions = page.getByRole('region', { name: 'Revisions' });
    await revisions.waitFor();
    expect(await revisions.innerText()).toContain('no: broken');
    await accessible('a broken checkpoint');
  });

  it('verifies the audit chain, and names the first broken entry with what was expected and found', async () => {
    await visit(`/console/tasks/${s.task}/audit`);
    await page.getByRole('region', { name: 'Audit entries' }).waitFor();
    await page.getByRole('button', { name: 'Verify the chain' }).click();
    await expect.poll(() => page.getByTestId('verify-result').textContent(), POLL).toContain('The chain holds');

    await visit(`/console/tasks/${s.ledger}/audit`);
    await page.getByRole('region', { name: 'Audit entries' }).waitFor();
    await page.getByRole('button', { name: 'Verify the chain' }).click();
    await page.getByTestId('verify-expected').waitFor();
    expect(await page.getByTestId('verify-result').innerText()).toContain(`broken at entry #${s.ledgerBreak.seq}`);
    expect(await page.getByTestId('verify-expected').textContent()).toBe(s.ledgerBreak.expected);
    expect(await page.getByTestId('verify-found').textContent()).toBe(s.ledgerBreak.found);
    expect(await page.locator(`#entry-${s.ledgerBreak.seq}`).innerText()).toContain('broken');

    // The evidence bundle: a tar when this server builds one, else a sentence that says so.
    const download = page.waitForEvent('download', { timeout: 5_000 }).catch(() => undefined);
    await page.getByRole('button', { name: 'Download evidence bundle (.tar)' }).click();
    await expect.poll(() => page.getByTestId('evidence-status').textContent(), POLL).toMatch(/saved|404/);
    if ((await page.getByTestId('evidence-status').textContent())!.includes('saved')) {
      const file = await download;
      expect(file?.suggestedFilename()).toBe(`evidence-${s.ledger}.tar`);
      const tar = readFileSync((await file!.path())!);
      expect(tar.subarray(257, 262).toString()).toBe('ustar');
    } else {
      expect(await page.getByTestId('evidence-status').textContent()).toContain('does not build evidence bundles');
    }
    await shoot('audit');
    await accessible('the audit view');
  });

  it('shows new events live, filtered by type, and resumes after a dropped connection without losing one', async () => {
    const call = apiCaller(base);
    await visit('/console/events');
    await page.getByText('Event types (none ticked: all)').waitFor({ state: 'attached' });
    await page.locator('summary', { hasText: 'Filter' }).click();
    const filtered = page.waitForRequest((request) => request.url().includes('types=CHECKPOINT_CREATED'));
    await page.getByLabel('CHECKPOINT_CREATED').check();
    await filtered;
    const state = page.getByTestId('stream-state');
    await expect.poll(() => state.getAttribute('data-state'), POLL).toBe('live');
    const rows = page.locator('li.event');

    await call('POST', `/v1/tasks/live-1/lease`, { agentId: 'agent-x', ttlMs: 600_000 });
    const one = await call('POST', '/v1/checkpoints', { taskId: 'live-1', agentId: 'agent-x' }, { 'baton-lease-epoch': '1' });
    await expect.poll(() => rows.count(), POLL).toBe(1);
    expect(await rows.first().innerText()).toContain('CHECKPOINT_CREATED');
    expect(await rows.first().innerText()).toContain('live-1');
    await accessible('live events');

    // Every connection is dropped under the page; an event is written while it is away.
    const streams = () => requests.filter((r) => r.url.startsWith(`${base}/v1/events`));
    const before = streams().length;
    t.app.server.closeAllConnections();
    const two = await call('POST', '/v1/checkpoints', { taskId: 'live-1', agentId: 'agent-x' }, { 'baton-lease-epoch': '1' });
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(2);
    const subjects = await rows.locator('a.mono').allTextContents();
    expect(subjects).toHaveLength(2);
    expect(await rows.first().innerText()).toContain(String(two.id).slice(0, 8));
    expect(await rows.nth(1).innerText()).toContain(String(one.id).slice(0, 8));
    const reconnect = streams().slice(before);
    expect(reconnect.length).toBeGreaterThan(0);
    expect(reconnect[0]!.headers['last-event-id']).toMatch(/^[0-9a-f]{24}$/);
    expect(reconnect[0]!.url).toContain('types=CHECKPOINT_CREATED');
    await expect.poll(() => state.getAttribute('data-state'), POLL).toBe('live');
  });

  it('logged no error but the refusals it was shown, and never put the token in an address', () => {
    // Chromium logs every refused request; these are the ones the views were meant to meet.
    const expected = [
      { status: /status of 401/, url: `${base}/v1/keys` },
      { status: /status of 409/, url: `${base}/v1/checkpoints/${s.corrupted.id}` },
      { status: /status of 404/, url: `${base}/v1/tasks/${s.ledger}/evidence` },
      { status: /net::ERR_INCOMPLETE_CHUNKED_ENCODING/, url: `${base}/v1/events` },
    ];
    const unexpected = errors.filter((e) => !expected.some((x) => e.text.startsWith('Failed to load resource') && x.status.test(e.text) && e.url.startsWith(x.url)));
    expect(unexpected).toEqual([]);
    expect(requests.length).toBeGreaterThan(20);
    for (const request of requests) expect(request.url).not.toContain(TOKENS.auditor);
  });
});
