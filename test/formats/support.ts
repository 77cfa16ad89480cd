/**
 * Helpers shared by the format tests: a stored checkpoint made from an input
 * the way the service makes one, and the comparisons the issue asks for
 * (XML equal after canonical whitespace, markdown section by section).
 */
import { readFileSync } from 'node:fs';
import { XMLParser } from 'fast-xml-parser';
import { checkpointInput, type Checkpoint, type CheckpointInput } from '../../src/domain/checkpoint.js';

export const CREATED_AT = '2026-03-01T09:30:00.000Z';
export const UPDATED_AT = '2026-03-01T10:45:00.000Z';

/** The stored checkpoint the service would build from `input` (version 1, no hash). */
export function materialize(input: CheckpointInput, id = '0195f3a0-7c1e-7d2a-9b3c-4d5e6f708192'): Checkpoint {
  const checkpoint: Checkpoint = {
    id,
    taskId: input.taskId,
    agentId: input.agentId,
    iteration: input.iteration ?? 1,
    schemaVersion: '1.0',
    status: 'active',
    version: 1,
    createdAt: CREATED_AT,
    updatedAt: UPDATED_AT,
    executionState: input.executionState ?? {},
    contextSummary: input.contextSummary ?? {},
    metrics: input.metrics ?? {},
    recovery: input.recovery ?? {},
    compliance: {},
    labels: input.labels ?? {},
    extensions: input.extensions ?? {},
  };
  if (input.agentType !== undefined) checkpoint.agentType = input.agentType;
  if (input.parentId !== undefined) checkpoint.parentId = input.parentId;
  return checkpoint;
}

/** Asserts what every parse result must be: an input the service accepts. */
export function assertValidInput(input: CheckpointInput): void {
  const parsed = checkpointInput.safeParse(input);
  if (!parsed.success) throw new Error(`parse produced an invalid input: ${JSON.stringify(parsed.error.issues)}`);
}

/** The input without its extensions: the part of a checkpoint that is the same whatever format it came from. */
export function withoutExtensions(input: CheckpointInput): CheckpointInput {
  const { extensions: _extensions, ...rest } = input;
  return rest;
}

export function fixture(name: string): string {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
}

const canonicalParser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: true,
  commentPropName: '#comment',
});

/** An XML document as a JSON string after canonical whitespace: texts trimmed, whitespace-only texts dropped, adjacent texts joined. */
export function canonicalXml(text: string): string {
  const normalize = (nodes: Array<Record<string, unknown>>): unknown[] => {
    const out: Array<Record<string, unknown>> = [];
    for (const node of nodes) {
      const key = Object.keys(node).find((k) => k !== ':@')!;
      if (key === '#text') {
        const value = decodeCharacterReferences(String(node[key])).trim();
        if (value === '') continue;
        const last = out.at(-1);
        if (last !== undefined && '#text' in last) last['#text'] = `${String(last['#text'])}${value}`;
        else out.push({ '#text': value });
      } else {
        const attributes = node[':@'] as Record<string, string> | undefined;
        out.push({ [key]: normalize(node[key] as Array<Record<string, unknown>>), ...(attributes ? { ':@': Object.entries(attributes) } : {}) });
      }
    }
    return out;
  };
  return JSON.stringify(normalize(canonicalParser.parse(text) as Array<Record<string, unknown>>));
}

/** The parser leaves `&#233;` and `&#xE9;` as written; canonical text has the character. */
function decodeCharacterReferences(text: string): string {
  return text.replace(/&#(x[0-9a-fA-F]+|[0-9]+);/g, (_, code: string) => String.fromCodePoint(code.startsWith('x') ? Number.parseInt(code.slice(1), 16) : Number.parseInt(code, 10)));
}

/** A markdown document as its front matter and its `##`/`###` sections (fences respected), for section-by-section comparison. */
export function markdownSections(text: string): { frontMatter: string | undefined; sections: Array<[string, string]> } {
  let body = text;
  let frontMatter: string | undefined;
  if (text.startsWith('---\n')) {
    const end = text.indexOf('\n---\n', 3);
    frontMatter = text.slice(4, end + 1);
    body = text.slice(end + 5);
  }
  const sections: Array<[string, string]> = [['', '']];
  let fenced = false;
  for (const line of body.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    if (!fenced && (line.startsWith('## ') || line.startsWith('### '))) sections.push([line, '']);
    else sections.at(-1)![1] += `${line}\n`;
  }
  return { frontMatter, sections };
}
