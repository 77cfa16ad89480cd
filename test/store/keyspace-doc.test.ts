import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { SPACES, SYSTEM_SPACES } from '../../src/store/keyspace.js';

it('documents every key space of src/store/keyspace.ts in docs/keyspace.md, and no other', () => {
  const doc = readFileSync(new URL('../../docs/keyspace.md', import.meta.url), 'utf8');
  const documented = [...doc.matchAll(/^\| `([a-z]+)` \| `\("\1"/gm)].map((m) => m[1]);
  expect(documented.sort()).toEqual(Object.values(SPACES).sort());
});

it('documents every system space of src/store/keyspace.ts in docs/keyspace.md, and no other', () => {
  const doc = readFileSync(new URL('../../docs/keyspace.md', import.meta.url), 'utf8');
  const documented = [...doc.matchAll(/^\| `([a-z]+)` \| `\("baton-system", "\1"/gm)].map((m) => m[1]);
  expect(documented.sort()).toEqual(Object.values(SYSTEM_SPACES).sort());
});
