import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { ERRORS } from '../../src/errors.js';

interface DocumentedError {
  status: number;
  title: string;
  message: string;
}

function documentedErrors(): Map<string, DocumentedError> {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const rows = doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| ([^|]+) \| ([^|]+) \| [^|]+ \|$/gm);
  const unescape = (text: string): string => text.trim().replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
  return new Map([...rows].map((m) => [m[1]!, { status: Number(m[2]), title: unescape(m[3]!), message: unescape(m[4]!) }]));
}

it('documents every code of src/errors.ts in docs/errors.md, with the same status, title and message', () => {
  const documented = documentedErrors();
  for (const [code, entry] of Object.entries(ERRORS)) {
    expect(documented.get(code), code).toEqual({ status: entry.status, title: entry.title, message: entry.message });
  }
});

it('documents no code that src/errors.ts does not have', () => {
  const documented = [...documentedErrors().keys()];
  expect(documented.filter((code) => !(code in ERRORS))).toEqual([]);
  expect(documented).toHaveLength(new Set(documented).size);
});
