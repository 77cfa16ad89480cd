/**
 * The docs name the repository's files, to send a reader to the code: every
 * path they name in backticks (`src/…`, `test/…`, `scripts/…` and the other
 * top-level folders) must exist, so a file renamed or folded into another
 * leaves no pointer to nothing behind.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const root = new URL('../', import.meta.url).pathname;
const FOLDERS = ['src', 'test', 'scripts', 'docs', 'loadtest', 'console', 'bin', 'deploy', 'examples', 'proto'];
/** A path in backticks: a known top-level folder, then path characters only (no globs, no ellipses, no placeholders). */
const PATH = new RegExp(`\`((?:${FOLDERS.join('|')})/[A-Za-z0-9_./-]+)\``, 'g');

function documents(): string[] {
  return [...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`), 'README.md'];
}

it('names only files and folders that exist', () => {
  const missing: string[] = [];
  for (const doc of documents()) {
    const text = readFileSync(join(root, doc), 'utf8');
    for (const [, path] of text.matchAll(PATH)) {
      // A trailing dot or slash is the sentence's or the folder's, not the file's.
      const clean = path!.replace(/[./]+$/, '');
      if (!existsSync(join(root, clean))) missing.push(`${doc}: ${clean}`);
    }
  }
  expect(missing).toEqual([]);
});
