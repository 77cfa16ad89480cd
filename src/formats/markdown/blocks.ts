/**
 * The content of a section as checkpoint values: a bullet list as entries,
 * the Artifact Trail table as file references. Each reader accepts a block
 * only when writing the values back gives the same text, so a block written
 * any other way is kept as written instead of being reformatted.
 *
 * @module
 */
import { filePath, type FileRef } from '../items.js';

/** A section body: blank lines before, the content, and blank lines or a thematic break after. */
export interface Body {
  lead: string;
  content: string;
  trail: string;
}

export function splitBody(body: string): Body {
  const lines = body.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const blank = (line: string) => line.trim() === '';
  let start = 0;
  while (start < lines.length && blank(lines[start]!)) start += 1;
  let end = lines.length;
  while (end > start && blank(lines[end - 1]!)) end -= 1;
  // A trailing --- separates this section from a delta below it; it is layout, not content.
  if (end > start && ['---', '***', '___'].includes(lines[end - 1]!.trim())) {
    end -= 1;
    while (end > start && blank(lines[end - 1]!)) end -= 1;
  }
  const joined = (from: number, to: number) => lines.slice(from, to).map((line) => `${line}\n`).join('');
  return { lead: joined(0, start), content: lines.slice(start, end).join('\n'), trail: joined(end, lines.length) };
}

export function joinBody(body: Body): string {
  return body.lead + (body.content === '' ? '' : `${body.content}\n`) + body.trail;
}

/** Entries of a `- ` list; an entry's further lines are indented by two spaces. */
export function readList(content: string): string[] | undefined {
  if (content === '') return [];
  const entries: string[] = [];
  for (const line of content.split('\n')) {
    if (line.startsWith('- ')) entries.push(line.slice(2));
    else if (line.startsWith('  ') && entries.length > 0) entries[entries.length - 1] += `\n${line.slice(2)}`;
    else return undefined;
  }
  return writeList(entries) === content ? entries : undefined;
}

export function writeList(entries: string[]): string {
  return entries.map((entry) => `- ${entry.split('\n').join('\n  ')}`).join('\n');
}

export const DEFAULT_TABLE_HEAD = '| File | Status | Key Change |\n|------|--------|------------|';

/** The Artifact Trail: a table head, then one row per file with the path in backticks. */
export function readTable(content: string): { head: string; files: FileRef[] } | undefined {
  const lines = content.split('\n');
  if (lines.length < 2 || cells(lines[0]!)?.length !== 3) return undefined;
  const head = `${lines[0]}\n${lines[1]}`;
  const files: FileRef[] = [];
  for (const row of lines.slice(2)) {
    const [file, status, change] = cells(row) ?? [];
    if (file === undefined || !file.startsWith('`') || !file.endsWith('`') || file.length < 3) return undefined;
    const path = file.slice(1, -1);
    if (status === '' && change === '') files.push(path);
    else files.push({ path, ...(status === '' ? {} : { status }), ...(change === '' ? {} : { keyChange: change }) });
  }
  return writeTable(head, files) === content ? { head, files } : undefined;
}

export function writeTable(head: string, files: FileRef[]): string {
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const rows = files.map((file) => {
    const extra = typeof file === 'string' ? {} : (file as Record<string, unknown>);
    return `| \`${escapeCell(filePath(file))}\` | ${escapeCell(text(extra.status))} | ${escapeCell(text(extra.keyChange))} |`;
  });
  return [head, ...rows].join('\n');
}

/** A row's three cells, split at pipes that are not escaped as `\|`, with those escapes undone. */
function cells(row: string): string[] | undefined {
  if (!row.startsWith('|') || !row.endsWith('|') || row.length < 2 || row.endsWith('\\|')) return undefined;
  const parts: string[] = [];
  let cell = '';
  const inner = row.slice(1, -1);
  for (let i = 0; i < inner.length; i++) {
    if (inner[i] === '\\' && inner[i + 1] === '|') {
      cell += '|';
      i += 1;
    } else if (inner[i] === '|') {
      parts.push(cell);
      cell = '';
    } else cell += inner[i];
  }
  parts.push(cell);
  return parts.length === 3 ? parts.map((part) => part.trim()) : undefined;
}

function escapeCell(text: string): string {
  return text.replaceAll('|', '\\|');
}
