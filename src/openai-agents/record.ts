/**
 * How an OpenAI Agents session and a run state sit in Baton checkpoints
 * (docs/openai-agents.md): the labels that find them, the extension that
 * holds them, and each history item in a form JSON and the RFC 8785 hash
 * keep exactly (byte arrays as base64, their places listed beside them).
 *
 * @module
 */
import type { Checkpoint } from '../client/types.js';

/**
 * A read found that the newest checkpoint it needs failed Baton's hash
 * check (Baton records it and announces CHECKPOINT_CORRUPTED). Answering
 * from an older checkpoint instead would silently lose what the newest
 * held, so the adapters refuse until it is dealt with: restored from the
 * evidence, or the task recovered (docs/recovery-runbook.md).
 */
export class CorruptedError extends Error {
  constructor(
    what: string,
    readonly checkpointIds: readonly string[],
  ) {
    super(`The newest checkpoint of ${what} failed Baton's hash check (${checkpointIds.join(', ')}); restore it or recover the task before using it.`);
    this.name = 'CorruptedError';
  }
}

/** The extension both kinds of checkpoint keep their data under. */
export const EXTENSION = 'openaiAgents';

export const LABEL = {
  /** `session` (a segment of a session's history) or `run-state`. */
  kind: 'oa.kind',
  /** The agent a saved run was with. */
  agent: 'oa.agent',
  /** How many tool approvals a saved run waits for. */
  interruptions: 'oa.interruptions',
} as const;

export const KIND = { session: 'session', runState: 'run-state' } as const;

/** A path into an item: object keys and array positions. */
export type Path = (string | number)[];

/** One history item as stored: the item with each byte array as base64, and where those were. */
export interface StoredItem {
  i: unknown;
  b?: Path[];
}

/**
 * One segment of a session's history. The newest segment is the head: it
 * takes every write, through If-Match. Once it outgrows its budget it is
 * sealed and a successor carries on, naming the sealed segments in `prior`.
 */
export interface SessionRecord {
  kind: typeof KIND.session;
  /** Sealed segments before this one, oldest first: [checkpoint id, how many of its items still belong]. */
  prior: [string, number][];
  /** This segment's items by position key (zero-padded, so key order is history order). */
  items?: Record<string, StoredItem>;
  /** The number the next item's key is made from. */
  next: number;
  /** Applied history transactions: operation id → fingerprint of the transaction. */
  ops?: Record<string, string>;
  /** Set once a successor segment takes over; a sealed segment never changes again. */
  sealed?: boolean;
}

export interface RunStateRecord {
  kind: typeof KIND.runState;
  /** `RunState.toJSON()`, as the SDK serialized it. */
  state: unknown;
}

/** An item's position key: zero-padded, so that keys sort as their numbers do. */
export function itemKey(position: number): string {
  return String(position).padStart(12, '0');
}

/** The session record of a checkpoint, or undefined when it holds none. */
export function sessionOf(doc: Checkpoint): SessionRecord | undefined {
  const record = (doc.extensions as Record<string, unknown>)[EXTENSION] as SessionRecord | undefined;
  return record?.kind === KIND.session ? record : undefined;
}

export function runStateOf(doc: Checkpoint): RunStateRecord | undefined {
  const record = (doc.extensions as Record<string, unknown>)[EXTENSION] as RunStateRecord | undefined;
  return record?.kind === KIND.runState ? record : undefined;
}

/** A segment's items in history order. */
export function segmentItems(record: SessionRecord): StoredItem[] {
  const items = record.items ?? {};
  return Object.keys(items)
    .sort()
    .map((key) => items[key]!);
}

/**
 * An item in stored form. Only what JSON keeps exactly is accepted (plain
 * objects, arrays, strings, finite numbers, booleans, null) plus byte
 * arrays; anything else would come back changed, so it is refused here.
 * Properties that are `undefined` are left out, as JSON leaves them.
 */
export function encodeItem(item: unknown): StoredItem {
  const bytes: Path[] = [];
  const encoded = encodeValue(item, [], bytes, new Set());
  return bytes.length > 0 ? { i: encoded, b: bytes } : { i: encoded };
}

function encodeValue(value: unknown, path: Path, bytes: Path[], ancestors: Set<object>): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('A session item holds a number JSON cannot keep (NaN or an infinity).');
    return value;
  }
  if (typeof value !== 'object') throw new TypeError('A session item holds a value JSON cannot keep (a function, symbol, bigint or undefined).');
  if (value instanceof Uint8Array) {
    bytes.push(path);
    return toBase64(value);
  }
  if (ancestors.has(value)) throw new TypeError('A session item refers to itself.');
  ancestors.add(value);
  try {
    if (Array.isArray(value)) return value.map((entry, index) => (entry === undefined ? null : encodeValue(entry, [...path, index], bytes, ancestors)));
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) throw new TypeError('A session item holds an object JSON cannot keep (a class instance such as a Date or Map).');
    const out: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(value)) if (entry !== undefined) out[key] = encodeValue(entry, [...path, key], bytes, ancestors);
    return out;
  } finally {
    ancestors.delete(value);
  }
}

/** A fresh copy of a stored item, byte arrays restored. */
export function decodeItem<T>(stored: StoredItem): T {
  const item = structuredClone(stored.i);
  for (const path of stored.b ?? []) {
    if (path.length === 0) return fromBase64(item as string) as T;
    let parent = item as Record<string | number, unknown>;
    for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
    const last = path[path.length - 1]!;
    parent[last] = fromBase64(parent[last] as string);
  }
  return item as T;
}

/**
 * JSON with object keys sorted, so that equal values give equal text
 * whatever order their keys were written in: how transactions and history
 * suffixes are compared.
 */
export function canonicalText(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((entry) => canonicalText(entry)).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalText((value as Record<string, unknown>)[key])}`).join(',')}}`;
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  // In slices: String.fromCharCode takes its arguments on the stack.
  for (let start = 0; start < bytes.length; start += 0x8000) binary += String.fromCharCode(...bytes.subarray(start, start + 0x8000));
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
