/**
 * Reading a markdown checkpoint: front matter checked and kept as written;
 * Decisions, Play-By-Play, Artifact Trail, Current State, Next Actions and
 * User Rules become checkpoint fields; everything else, deltas included, is
 * kept in order in `extensions.markdown`.
 *
 * @module
 */
import type { CheckpointInput } from '../../domain/checkpoint.js';
import { checkSize, FormatError } from '../errors.js';
import type { ParseOptions } from '../format.js';
import { finishInput, pruneEmpty, resolveTaskId, UNKNOWN_AGENT } from '../input.js';
import { DEFAULT_TABLE_HEAD, readList, readTable, splitBody } from './blocks.js';
import { checkFrontMatter, splitFrontMatter } from './front-matter.js';
import { isDelta, sectionNamed, type SectionField } from './layout.js';
import type { MarkdownResidue, StoredSection } from './residue.js';
import { splitSections } from './sections.js';

export const FORMAT = 'markdown';
export const MAX_MARKDOWN_CHARS = 4 * 1024 * 1024;

/** Where each field lives in a checkpoint input, for naming the section in validation errors. */
export const INPUT_PATHS: Record<SectionField, string> = {
  keyDecisions: 'contextSummary.keyDecisions',
  completedItems: 'executionState.completedItems',
  filesModified: 'metrics.filesModified',
  currentFocus: 'executionState.currentFocus',
  pendingItems: 'executionState.pendingItems',
  constraints: 'contextSummary.constraints',
};

export function parseMarkdown(source: string, options: ParseOptions): CheckpointInput {
  checkSize(FORMAT, source, MAX_MARKDOWN_CHARS);
  const crlf = source.includes('\r\n');
  let text = crlf ? source.replaceAll('\r\n', '\n') : source;
  const finalNewline = text === '' || text.endsWith('\n');
  if (!finalNewline) text += '\n';
  const { frontMatter, body, bodyLine } = splitFrontMatter(FORMAT, text);
  if (frontMatter !== undefined) checkFrontMatter(FORMAT, frontMatter);
  const { preamble, sections } = splitSections(body, bodyLine);
  const residue: MarkdownResidue = { ...(frontMatter === undefined ? {} : { frontMatter }), preamble, sections: [] };
  if (crlf) residue.crlf = true;
  if (!finalNewline) residue.finalNewline = false;
  const values = new Map<SectionField, unknown>();
  const origins: Record<string, string> = {};
  for (const section of sections) {
    const known = isDelta(section.title) ? undefined : sectionNamed(section.title);
    const field = known?.spec.field;
    if (known === undefined || field === undefined) {
      residue.sections.push({ heading: section.heading, text: section.body });
      continue;
    }
    if (values.has(field)) {
      throw new FormatError({ format: FORMAT, field: section.title, line: section.line, column: 1, expected: `one ${known.spec.title} section` });
    }
    origins[INPUT_PATHS[field]] = `section ${known.spec.title} (line ${section.line})`;
    const { lead, content, trail } = splitBody(section.body);
    const stored: StoredSection = { heading: section.heading, field, lead, trail };
    values.set(field, read(field, content, stored));
    residue.sections.push(stored);
  }
  const input: CheckpointInput = {
    taskId: resolveTaskId(FORMAT, options),
    agentId: options.agentId ?? UNKNOWN_AGENT,
    executionState: {},
    contextSummary: {},
    metrics: {},
    extensions: { [FORMAT]: residue },
  };
  for (const [field, value] of values) {
    if (value === undefined) continue;
    const [section, key] = INPUT_PATHS[field].split('.') as [keyof CheckpointInput, string];
    (input[section] as Record<string, unknown>)[key] = value;
  }
  return finishInput(FORMAT, pruneEmpty(input), origins);
}

/** The field's value from a section's content; how it was written is noted on `stored` when export needs it. */
function read(field: SectionField, content: string, stored: Extract<StoredSection, { field: string }>): unknown {
  if (field === 'currentFocus') return content;
  if (field === 'filesModified') {
    const table = readTable(content);
    if (table === undefined) {
      stored.raw = content;
      return undefined;
    }
    if (table.head !== DEFAULT_TABLE_HEAD) stored.head = table.head;
    return table.files;
  }
  const list = readList(content);
  if (list !== undefined) return list;
  stored.form = 'prose';
  return [content];
}
