/**
 * A small, JSON-friendly tree of an XML document, read safely and written
 * back. Reading refuses any DOCTYPE (so no entity can be declared, expanded or
 * fetched), checks well-formedness first for an error with line and column,
 * and decodes only the five predefined entities and character references.
 *
 * @module
 */
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';
import { z } from 'zod';
import { checkSize, FormatError, positionOf } from '../errors.js';

export interface XmlElement {
  element: string;
  attributes?: Array<[string, string]>;
  children: XmlNode[];
}
export interface XmlInstruction {
  instruction: string;
  attributes?: Array<[string, string]>;
}
export type XmlNode =
  | XmlElement
  | XmlInstruction
  | { text: string }
  | { comment: string }
  /** Where a value kept in the checkpoint's own fields goes back on export; `raw` is text the field could not hold. */
  | { slot: string; raw?: string };

export const MAX_XML_CHARS = 4 * 1024 * 1024;
/** Checkpoint documents nest four or five levels; the cap keeps every recursive walk shallow. */
export const MAX_XML_DEPTH = 64;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  // Entities are decoded below, where only the predefined ones exist; nothing is ever expanded by the parser.
  processEntities: false,
  commentPropName: '#comment',
  cdataPropName: '#cdata',
  maxNestedTags: MAX_XML_DEPTH,
});

const builder = new XMLBuilder({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  format: true,
  indentBy: '  ',
  commentPropName: '#comment',
  processEntities: true,
  suppressEmptyNode: true,
});

export function isElement(node: XmlNode): node is XmlElement {
  return 'element' in node;
}

/** Reads `text` into the tree; every fault is a FormatError for `format`. */
export function readXml(format: string, text: string): XmlNode[] {
  checkSize(format, text, MAX_XML_CHARS);
  refuseDoctype(format, text);
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    throw new FormatError({ format, line: valid.err.line, column: valid.err.col, expected: `well-formed XML (${valid.err.msg})` });
  }
  let raw: unknown[];
  try {
    raw = parser.parse(text) as unknown[];
  } catch (cause) {
    throw new FormatError({ format, field: 'document', expected: `well-formed XML (${cause instanceof Error ? cause.message : 'unreadable'})` }, { cause });
  }
  return convert(format, raw, '');
}

/**
 * A DOCTYPE may only stand in the prolog, before the root element; looking
 * there is enough to refuse every internal or external entity declaration.
 */
function refuseDoctype(format: string, text: string): void {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i += 1;
    if (text.startsWith('<?', i)) i = skipPast(text, i, '?>');
    else if (text.startsWith('<!--', i)) i = skipPast(text, i, '-->');
    else break;
  }
  if (text.slice(i, i + 9).toUpperCase() === '<!DOCTYPE') {
    const { line, column } = positionOf(text, i);
    throw new FormatError({ format, line, column, expected: 'no DOCTYPE: document type declarations and entities are refused' });
  }
}

function skipPast(text: string, from: number, end: string): number {
  const at = text.indexOf(end, from);
  return at < 0 ? text.length : at + end.length;
}

function convert(format: string, entries: unknown[], path: string): XmlNode[] {
  const nodes: XmlNode[] = [];
  const pushText = (text: string) => {
    const last = nodes.at(-1);
    if (last !== undefined && 'text' in last) last.text += text;
    else nodes.push({ text });
  };
  for (const entry of entries as Array<Record<string, unknown>>) {
    const name = Object.keys(entry).find((key) => key !== ':@')!;
    const content = entry[name];
    if (name === '#text') pushText(decodeEntities(format, String(content), path || 'document'));
    else if (name === '#cdata') pushText(innerText(content));
    else if (name === '#comment') nodes.push({ comment: innerText(content) });
    else if (name.startsWith('?')) {
      const attributes = attributesOf(format, entry[':@'], path);
      nodes.push({ instruction: name.slice(1), ...(attributes === undefined ? {} : { attributes }) });
    } else {
      const here = `${path}/${name}`;
      const attributes = attributesOf(format, entry[':@'], here);
      nodes.push({ element: name, ...(attributes === undefined ? {} : { attributes }), children: convert(format, content as unknown[], here) });
    }
  }
  return nodes;
}

function innerText(content: unknown): string {
  return (content as Array<Record<string, unknown>>).map((part) => String(part['#text'] ?? '')).join('');
}

function attributesOf(format: string, attributes: unknown, path: string): Array<[string, string]> | undefined {
  if (typeof attributes !== 'object' || attributes === null) return undefined;
  const pairs = Object.entries(attributes).map(([name, value]): [string, string] => [name, decodeEntities(format, String(value), `${path}@${name}`)]);
  return pairs.length > 0 ? pairs : undefined;
}

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Decodes the predefined entities and character references; any other entity was never declared. */
function decodeEntities(format: string, text: string, field: string): string {
  if (!text.includes('&')) return text;
  let out = '';
  let i = 0;
  while (i < text.length) {
    const amp = text.indexOf('&', i);
    if (amp < 0) break;
    out += text.slice(i, amp);
    const semi = text.indexOf(';', amp);
    const name = semi < 0 || semi - amp > 12 ? '' : text.slice(amp + 1, semi);
    const decoded = Object.hasOwn(PREDEFINED, name) ? PREDEFINED[name] : characterReference(name);
    if (decoded === undefined) {
      throw new FormatError({ format, field, expected: 'only the entities &lt; &gt; &amp; &quot; &apos; and character references' });
    }
    out += decoded;
    i = semi + 1;
  }
  return out + text.slice(i);
}

function characterReference(name: string): string | undefined {
  if (!name.startsWith('#')) return undefined;
  const hex = name[1] === 'x';
  const digits = name.slice(hex ? 2 : 1);
  if (digits === '' || ![...digits].every((ch) => (hex ? '0123456789abcdefABCDEF' : '0123456789').includes(ch))) return undefined;
  const code = Number.parseInt(digits, hex ? 16 : 10);
  return xmlChar(code) ? String.fromCodePoint(code) : undefined;
}

/** The characters XML 1.0 allows in a document. */
function xmlChar(code: number): boolean {
  return code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
}

/** Text with the characters XML cannot carry replaced, so an export always parses. */
function xmlSafe(text: string): string {
  let out = '';
  for (const ch of text) out += xmlChar(ch.codePointAt(0)!) ? ch : '\ufffd';
  return out;
}

/** Writes the tree as an indented document ending in a newline. */
export function writeXml(nodes: XmlNode[]): string {
  return `${builder.build(nodes.map(toBuilder)).replace(/^\n+/, '')}\n`;
}

function toBuilder(node: XmlNode): Record<string, unknown> {
  const attrs = (pairs: Array<[string, string]> | undefined) => (pairs === undefined ? {} : { ':@': Object.fromEntries(pairs.map(([k, v]) => [k, xmlSafe(v)])) });
  if ('element' in node) return { [node.element]: node.children.map(toBuilder), ...attrs(node.attributes) };
  if ('text' in node) return { '#text': xmlSafe(node.text) };
  if ('comment' in node) return { '#comment': [{ '#text': xmlSafe(node.comment).replaceAll('--', '- -') }] };
  if ('instruction' in node) return { [`?${node.instruction}`]: [{ '#text': '' }], ...attrs(node.attributes) };
  return { '#text': xmlSafe(node.raw ?? '') };
}

const xmlName = z.string().refine((name) => name.length > 0 && ![...name].some((ch) => ' \t\r\n<>&"\'/=!?'.includes(ch)), 'must be an XML name');
const attributes = z.array(z.tuple([xmlName, z.string()])).optional();
const node: z.ZodType<XmlNode> = z.lazy(() =>
  z.union([
    z.object({ element: xmlName, attributes, children: z.array(node) }),
    z.object({ text: z.string() }),
    z.object({ comment: z.string() }),
    z.object({ instruction: xmlName, attributes }),
    z.object({ slot: z.string(), raw: z.string().optional() }),
  ]),
);

/** A stored tree checked again before export (a patch may have changed it), or undefined when it is unusable. */
export function storedTree(value: unknown): XmlNode[] | undefined {
  if (!shallowEnough(value)) return undefined;
  const parsed = z.array(node).safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

function shallowEnough(value: unknown): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > 4 * MAX_XML_DEPTH) return false;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return true;
}
