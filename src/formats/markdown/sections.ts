/**
 * The section splitter: a markdown checkpoint is a preamble and a sequence of
 * sections, each a heading line and the text up to the next heading that
 * starts a section. It reads line by line and skips fenced code, so a `## `
 * inside a code block never starts a section.
 *
 * @module
 */
import { LEVEL_THREE_TITLES, titleKey } from './layout.js';

export interface RawSection {
  /** The heading line exactly as written. */
  heading: string;
  level: number;
  /** The heading text, for matching section names. */
  title: string;
  /** 1-based line of the heading in the whole document. */
  line: number;
  /** Everything after the heading line up to the next section, newlines included. */
  body: string;
}

/** Splits `text` (which ends with a newline) into the preamble and its sections; `firstLine` is the line `text` starts on. */
export function splitSections(text: string, firstLine: number): { preamble: string; sections: RawSection[] } {
  const sections: RawSection[] = [];
  /** Where each section's body starts; its end is known when the next section starts. */
  const bodyStarts: number[] = [];
  let preambleEnd = text.length;
  let fence: string | undefined;
  let parent = '';
  let offset = 0;
  let line = firstLine;
  const close = (at: number) => {
    const last = sections.at(-1);
    if (last !== undefined) last.body = text.slice(bodyStarts.at(-1), at);
    else preambleEnd = at;
  };
  while (offset < text.length) {
    const end = text.indexOf('\n', offset);
    const next = end < 0 ? text.length : end + 1;
    const content = text.slice(offset, end < 0 ? text.length : end);
    const marker = fenceMarker(content);
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length && content.trim() === marker) fence = undefined;
    } else if (marker !== undefined) fence = marker;
    else {
      const heading = parseHeading(content);
      if (heading !== undefined && startsSection(heading, parent)) {
        close(offset);
        if (heading.level <= 2) parent = titleKey(heading.title);
        sections.push({ heading: content, level: heading.level, title: heading.title, line, body: '' });
        bodyStarts.push(next);
      }
    }
    offset = next;
    line += 1;
  }
  close(text.length);
  return { preamble: text.slice(0, preambleEnd), sections };
}

/**
 * Level one and two headings always start a section; a level three heading
 * does inside Essential Information, or when it names a known section outside
 * a delta (whose own `###` parts belong to it).
 */
function startsSection(heading: { level: number; title: string }, parent: string): boolean {
  if (heading.level <= 2) return true;
  if (heading.level > 3 || parent.startsWith('delta:')) return false;
  return parent === titleKey('Essential Information') || LEVEL_THREE_TITLES.has(titleKey(heading.title));
}

/** An ATX heading: up to three spaces, one to six `#`, then a space or the end of the line. */
export function parseHeading(content: string): { level: number; title: string } | undefined {
  let i = 0;
  while (i < 3 && content[i] === ' ') i += 1;
  let level = 0;
  while (content[i + level] === '#') level += 1;
  if (level === 0 || level > 6) return undefined;
  const rest = content.slice(i + level);
  if (rest !== '' && rest[0] !== ' ' && rest[0] !== '\t') return undefined;
  // A closing run of # after a space is decoration, not part of the title.
  return { level, title: rest.trim().replace(/(^|[ \t]+)#+$/, '').trim() };
}

/** The fence opener on a line (``` or ~~~, three or more), if any. */
function fenceMarker(content: string): string | undefined {
  const trimmed = content.replace(/^ {0,3}/, '');
  const ch = trimmed[0];
  if (ch !== '`' && ch !== '~') return undefined;
  let n = 0;
  while (trimmed[n] === ch) n += 1;
  return n >= 3 ? ch.repeat(n) : undefined;
}
