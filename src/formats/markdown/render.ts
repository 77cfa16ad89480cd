/**
 * Writing a checkpoint as markdown: the stored layout of an imported document
 * with its field sections written from the checkpoint's current fields (and
 * sections added, in the format's order, for fields set since), or a document
 * built from the fields alone.
 *
 * @module
 */
import { stringify } from 'yaml';
import type { Checkpoint } from '../../domain/checkpoint.js';
import { decisionText, itemText, type Decision, type FileRef, type Item } from '../items.js';
import { DEFAULT_TABLE_HEAD, joinBody, splitBody, writeList, writeTable } from './blocks.js';
import { LAYOUT, sectionNamed, type SectionField } from './layout.js';
import { FORMAT } from './parse.js';
import { markdownResidue, type MarkdownResidue, type StoredSection } from './residue.js';
import { parseHeading } from './sections.js';

export function renderMarkdown(checkpoint: Checkpoint): string {
  const parsed = markdownResidue.safeParse(checkpoint.extensions[FORMAT]);
  if (parsed.success) return write(checkpoint, parsed.data);
  // Without a stored layout the document has the format's own: front matter, then the fields' sections.
  const header: Record<string, string> = { checkpoint: checkpoint.id, created: checkpoint.createdAt };
  if (checkpoint.parentId !== undefined) header.parent = checkpoint.parentId;
  const levelThree = LAYOUT.some((spec) => spec.level === 3 && spec.field !== undefined && valueOf(checkpoint, spec.field) !== undefined);
  const sections: StoredSection[] = levelThree ? [{ heading: '## Essential Information', text: '\n' }] : [];
  return write(checkpoint, { frontMatter: stringify(header), preamble: '\n', sections }).replace(/\n+$/, '\n');
}

/** A section of the output; `trail` is kept apart so a section added after it can take over a separator. */
interface Written {
  index: number | undefined;
  text: string;
  trail: string;
}

function write(checkpoint: Checkpoint, residue: MarkdownResidue): string {
  const out: Written[] = [];
  const present = new Set<SectionField>();
  for (const section of residue.sections) {
    const index = sectionNamed(parseHeading(section.heading)?.title ?? '')?.index;
    if ('text' in section) {
      const body = splitBody(section.text);
      const separated = hasRule(body.trail);
      out.push({ index, text: `${section.heading}\n${separated ? joinBody({ ...body, trail: '' }) : section.text}`, trail: separated ? body.trail : '' });
      continue;
    }
    present.add(section.field);
    const content = contentOf(checkpoint, section.field, section);
    if (content !== undefined) out.push({ index, text: `${section.heading}\n${joinBody({ lead: section.lead, content, trail: '' })}`, trail: section.trail });
  }
  LAYOUT.forEach((spec, index) => {
    if (spec.field === undefined || present.has(spec.field)) return;
    const content = contentOf(checkpoint, spec.field, undefined);
    if (content === undefined) return;
    const before = out.findLastIndex((entry) => entry.index !== undefined && entry.index < index);
    const added: Written = { index, text: `${'#'.repeat(spec.level)} ${spec.title}\n${joinBody({ lead: '\n', content, trail: '' })}`, trail: '\n' };
    // A separator closing the section before belongs between the sections and what follows them (a delta).
    const previous = out[before];
    if (previous !== undefined && hasRule(previous.trail)) [added.trail, previous.trail] = [previous.trail, '\n'];
    out.splice(before + 1, 0, added);
  });
  let text = (residue.frontMatter === undefined ? '' : `---\n${residue.frontMatter}---\n`) + residue.preamble + out.map((entry) => entry.text + entry.trail).join('');
  if (residue.finalNewline === false && text.endsWith('\n')) text = text.slice(0, -1);
  return residue.crlf === true ? text.replaceAll('\n', '\r\n') : text;
}

function hasRule(trail: string): boolean {
  return trail.split('\n').some((line) => ['---', '***', '___'].includes(line.trim()));
}

function valueOf(checkpoint: Checkpoint, field: SectionField): unknown {
  if (field === 'keyDecisions' || field === 'constraints') return checkpoint.contextSummary[field];
  if (field === 'filesModified') return checkpoint.metrics.filesModified;
  return checkpoint.executionState[field] ?? undefined;
}

/** The section content for a field, or undefined when the section has nothing to show. */
function contentOf(checkpoint: Checkpoint, field: SectionField, stored: Extract<StoredSection, { field: string }> | undefined): string | undefined {
  const value = valueOf(checkpoint, field);
  if (field === 'currentFocus') return typeof value === 'string' ? value : undefined;
  if (field === 'filesModified') return value === undefined ? stored?.raw : writeTable(stored?.head ?? DEFAULT_TABLE_HEAD, value as FileRef[]);
  if (value === undefined) return undefined;
  const entries = field === 'keyDecisions' ? (value as Decision[]).map(decisionLine) : (value as Item[]).map(itemText);
  if (stored?.form === 'prose' && entries.length === 1 && typeof (value as unknown[])[0] === 'string') return entries[0];
  return writeList(entries);
}

function decisionLine(entry: Decision): string {
  return typeof entry !== 'string' && entry.rationale !== undefined ? `${entry.decision} — ${entry.rationale}` : decisionText(entry);
}
