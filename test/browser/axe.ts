/**
 * axe-core run inside a page that forbids inline scripts (the console's
 * Content Security Policy): the library is evaluated through the DevTools
 * protocol, which the policy does not govern, and asked for violations.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** The serious and critical violations axe finds in the page as it is now. */
export async function seriousViolations(page: Page): Promise<Violation[]> {
  if ((await page.evaluate('typeof window.axe')) === 'undefined') await page.evaluate(AXE);
  const violations = (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) })))`,
  )) as Violation[];
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
