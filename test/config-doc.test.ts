/**
 * docs/configuration.md lists every setting of src/config.ts, in its group,
 * with its default, and nothing else: the page an operator reads is the
 * table the service reads.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../src/config.js';

const page = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');

/** The rows of the page, by group heading: variable → default column. */
function documented(): Map<string, Map<string, string>> {
  const groups = new Map<string, Map<string, string>>();
  let group: Map<string, string> | undefined;
  for (const line of page.split('\n')) {
    const heading = /^## (\S+)$/.exec(line);
    if (heading) groups.set(heading[1]!, (group = new Map()));
    const row = /^\| `([A-Z_]+)` \| ([^|]+) \|/.exec(line);
    if (row && group) group.set(row[1]!, row[2]!.trim());
  }
  return groups;
}

/** How the page writes a default: the value in backticks, `(empty)` for an empty string, `—` for none. */
function shown(value: unknown): string {
  if (value === undefined) return '—';
  if (value === '') return '(empty)';
  return `\`${String(value)}\``;
}

describe('docs/configuration.md', () => {
  it('has each group of settings, with exactly its variables and their defaults', () => {
    const doc = documented();
    expect([...doc.keys()]).toEqual(Object.keys(SETTINGS));
    for (const [name, settings] of Object.entries(SETTINGS)) {
      const expected = Object.fromEntries(Object.values(settings).map((s) => [s.env, shown(s.schema.safeParse(undefined).data)]));
      expect(Object.fromEntries(doc.get(name)!), `group ${name}`).toEqual(expected);
    }
  });
});
