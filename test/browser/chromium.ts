/**
 * Debian's Chromium for the browser tests: where it is, whether it can run,
 * and how it is launched. Without it `npm test` reports the file skipped;
 * with `BATON_REQUIRE_BROWSER=1` (as `.ci/run` sets) a file registers a test
 * that fails instead, so CI cannot go green without the pages being seen.
 */
import { accessSync, constants } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { describe, it } from 'vitest';

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

/** Whether the browser tests of `title` can run; reports the skip, or registers the failing test CI requires. */
export function chromiumAvailable(title: string, tag: string): boolean {
  const available = executable(CHROMIUM);
  if (!available && !REQUIRED) console.log(`[${tag}] skipped: ${MISSING}`);
  if (!available && REQUIRED) {
    describe(title, () => {
      it('needs Chromium', () => {
        throw new Error(`BATON_REQUIRE_BROWSER=1, but ${MISSING}.`);
      });
    });
  }
  return available;
}

/** Headless Chromium with the flags this machine's closed network needs (no background connections). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
