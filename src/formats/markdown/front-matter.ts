/**
 * The YAML front matter of a markdown checkpoint: found line by line between
 * the opening and closing `---`, bounded in size before YAML sees it, and
 * parsed with alias expansion capped, so neither a huge block nor an alias
 * bomb costs more than a few milliseconds to refuse.
 *
 * @module
 */
import { LineCounter, parseDocument } from 'yaml';
import { FormatError } from '../errors.js';
import { isObject } from '../json.js';

export const MAX_FRONT_MATTER_CHARS = 64 * 1024;
const MAX_ALIASES = 100;
/** The header fields of the format; each holds one scalar value. */
const HEADER_FIELDS = ['checkpoint', 'created', 'anchor', 'last_delta', 'parent', 'status'];

/** The text between the `---` lines (each line with its newline) and the body after them. */
export function splitFrontMatter(format: string, text: string): { frontMatter?: string; body: string; bodyLine: number } {
  if (!text.startsWith('---\n')) return { body: text, bodyLine: 1 };
  let start = 4;
  let line = 2;
  while (start < text.length) {
    if (start - 4 > MAX_FRONT_MATTER_CHARS) {
      throw new FormatError({ format, field: 'front matter', line: 1, column: 1, expected: `front matter of at most ${MAX_FRONT_MATTER_CHARS} characters` });
    }
    const end = text.indexOf('\n', start);
    const next = end < 0 ? text.length : end + 1;
    if (text.slice(start, end < 0 ? text.length : end) === '---') {
      return { frontMatter: text.slice(4, start), body: text.slice(next), bodyLine: line + 1 };
    }
    start = next;
    line += 1;
  }
  throw new FormatError({ format, field: 'front matter', line: 1, column: 1, expected: 'a closing --- line after the front matter' });
}

/** Checks that the front matter is a YAML mapping whose header fields hold single values. */
export function checkFrontMatter(format: string, yaml: string): void {
  const lineCounter = new LineCounter();
  let value: unknown;
  try {
    const doc = parseDocument(yaml, { lineCounter, uniqueKeys: true, schema: 'core', prettyErrors: false });
    const problem = doc.errors[0] ?? doc.warnings[0];
    if (problem !== undefined) {
      const at = lineCounter.linePos(problem.pos[0]);
      // The front matter starts on the document's second line, after the opening ---.
      throw new FormatError({ format, field: 'front matter', line: at.line + 1, column: at.col, expected: `valid YAML (${problem.code})` });
    }
    value = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (cause) {
    if (cause instanceof FormatError) throw cause;
    throw new FormatError({ format, field: 'front matter', expected: 'YAML without excessive aliases or nesting' }, { cause });
  }
  if (value === null || value === undefined) return;
  if (!isObject(value)) throw new FormatError({ format, field: 'front matter', line: 2, column: 1, expected: 'a YAML mapping such as "checkpoint: chk-001"' });
  for (const key of HEADER_FIELDS) {
    const field = value[key];
    if (Object.hasOwn(value, key) && typeof field === 'object' && field !== null) {
      throw new FormatError({ format, field: `front matter: ${key}`, expected: 'a single value, not a list or mapping' });
    }
  }
}
