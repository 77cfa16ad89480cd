/**
 * A fast-check arbitrary of markdown checkpoints: optional front matter, a
 * preamble, the format's sections in any order and subset (each field section
 * at most once), unknown sections and `## Delta:` sections, with bodies drawn
 * from the kinds of lines agents write: prose, lists with continuation lines,
 * tables, blank lines, separators, sub-headings and code fences.
 */
import fc from 'fast-check';
import { stringify } from 'yaml';
import { timestamp } from './arbitraries.js';

const word = fc.constantFrom('auth', 'token', 'JWT', 'refresh', 'café', '→', 'tests', 'pass', '15min', 'done', 'src/a.ts', '`x`', '**bold**', '#tag', '|', '---x');
export const words = fc.array(word, { minLength: 1, maxLength: 6 }).map((parts) => parts.join(' '));

/** One body line; none of them is a heading that starts a section. */
const bodyLine = fc.oneof(
  { weight: 4, arbitrary: words },
  { weight: 4, arbitrary: words.map((text) => `- ${text}`) },
  { weight: 1, arbitrary: words.map((text) => `  ${text}`) },
  { weight: 1, arbitrary: words.map((text) => `* ${text}`) },
  { weight: 1, arbitrary: words.map((text) => `1. ${text}`) },
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constantFrom('---', '***', '| File | Status | Key Change |', '|------|--------|------------|', '```', '```ts', '~~~', '#### Details', '   ') },
  { weight: 1, arbitrary: fc.tuple(words, words).map(([status, change]) => `| \`src/${status.length}.ts\` | ${status} | ${change} |`) },
);
const body = fc.array(bodyLine, { maxLength: 6 }).map((lines) => lines.map((line) => `${line}\n`).join(''));

/** A table the Artifact Trail can map. */
const artifactTable = fc
  .array(fc.tuple(fc.constantFrom('src/a.ts', 'lib/b c.md', 'x'), fc.constantFrom('created', 'modified', 'deleted', ''), fc.constantFrom('', 'new endpoint', 'retries')), { maxLength: 3 })
  .map((rows) => `| File | Status | Key Change |\n|------|--------|------------|\n${rows.map(([path, status, change]) => `| \`${path}\` | ${status} | ${change} |\n`).join('')}`);
const list = fc.array(words, { minLength: 1, maxLength: 4 }).map((entries) => entries.map((entry) => `- ${entry}\n`).join(''));
const fieldBody = fc.oneof(body, list, list, artifactTable);
const spacing = fc.constantFrom('', '\n', '\n\n');

const FIELD_TITLES = ['Decisions', 'Play-By-Play', 'Artifact Trail', 'Current State', 'Next Actions', 'User Rules'];
const OTHER_TITLES = ['Problem', 'Session Intent', 'Essential Information', 'Technical Context', 'Breadcrumbs', 'Completion', 'Notes', 'Open Questions'];

const section = (headings: fc.Arbitrary<string>, content: fc.Arbitrary<string>) =>
  fc.tuple(headings, spacing, content, spacing).map(([heading, lead, text, trail]) => `${heading}\n${lead}${text}${trail}`);
const fieldSection = (title: string) => section(fc.constantFrom(`### ${title}`, `## ${title}`, `### ${title.toUpperCase()}`), fieldBody);
const otherSection = section(
  fc.constantFrom(...OTHER_TITLES).chain((title) => fc.constantFrom(`## ${title}`, `### ${title}`)),
  body,
);
const delta = fc
  .tuple(timestamp, words, artifactTable, fc.boolean())
  .map(([at, changed, table, rule]) => `${rule ? '---\n\n' : ''}## Delta: ${at}\n\n### What Changed\n\n${changed}\n\n### Artifacts\n\n${table}\n### Status Transitions\n\n| Item | Before | After |\n|------|--------|-------|\n`);

const frontMatter = fc
  .record({ checkpoint: fc.constantFrom('chk-001', 'session-abc-003'), created: timestamp, anchor: words, parent: fc.constantFrom('chk-000'), status: fc.constantFrom('current', 'active') }, { requiredKeys: ['checkpoint', 'created'] })
  .chain((header) => fc.constantFrom(`---\n${stringify(header)}---\n`, `---\n${stringify(header)}# a comment\n---\n`));

export const markdownDocument: fc.Arbitrary<string> = fc
  .tuple(
    fc.option(frontMatter, { nil: undefined }),
    fc.array(fc.oneof(words, fc.constant('')), { maxLength: 2 }),
    fc.subarray(FIELD_TITLES).chain((titles) => fc.tuple(...titles.map(fieldSection))),
    fc.array(otherSection, { maxLength: 4 }),
    fc.array(delta, { maxLength: 2 }),
    fc.nat(),
    fc.constantFrom('lf', 'crlf', 'no-final-newline'),
  )
  .map(([front, preamble, fields, others, deltas, seed, ending]) => {
    const sections = [...fields];
    others.forEach((other, i) => sections.splice((seed + i * 5) % (sections.length + 1), 0, other));
    let text = preamble.map((line) => `${line}\n`).join('') + [...sections, ...deltas].join('');
    // A first line of --- opens front matter; a document without any starts otherwise.
    if (front !== undefined) text = front + text;
    else if (text.startsWith('---')) text = `# Checkpoint\n${text}`;
    if (ending === 'crlf') return text.replaceAll('\n', '\r\n');
    return ending === 'no-final-newline' ? text.replace(/\n$/, '') : text;
  });
