/**
 * The checks a history transaction passes before anything is written, as
 * the SDK's `SessionHistoryTransactionAwareSession` contract asks: its
 * arguments read once, its operation id non-empty, its fields exactly
 * those of its type, and its items plain data that can be snapshotted and
 * compared (the same rules, and the same messages, as the SDK's own
 * `MemorySession`). A refused transaction records nothing, so its
 * operation id stays free for a corrected retry.
 *
 * @module
 */
import { UserError, protocol, type AgentInputItem, type SessionHistoryTransaction, type SessionHistoryTransactionArgs } from '@openai/agents-core';
import { canonicalText, encodeItem } from './record.js';

const INVALID_ITEMS = 'Session history transaction items contain invalid or unsupported data.';

/** The transaction's own copy: later changes to the caller's objects do not reach it. */
export function snapshotTransactionArgs(args: SessionHistoryTransactionArgs): SessionHistoryTransactionArgs {
  let operationId: unknown;
  let transaction: unknown;
  try {
    if (!args || typeof args !== 'object') throw new Error('Missing transaction arguments.');
    operationId = Reflect.get(args, 'operationId');
    transaction = Reflect.get(args, 'transaction');
  } catch {
    // The accessor's own error may hold the caller's data; it is not repeated.
    throw new UserError('Session history transaction arguments are invalid.');
  }
  if (typeof operationId !== 'string' || !operationId.trim()) throw new UserError('Session history transaction operationId must be a non-empty string.');
  if (!transaction || typeof transaction !== 'object') throw new UserError('Session history transaction must be an object.');
  return { operationId, transaction: snapshotTransaction(transaction) };
}

function snapshotTransaction(transaction: object): SessionHistoryTransaction {
  let snapshot: unknown;
  try {
    snapshot = snapshotValue(transaction, new WeakSet());
    // Refuses what a snapshot cannot see, such as a Proxy.
    structuredClone(transaction);
  } catch {
    throw new UserError(INVALID_ITEMS);
  }
  if (!snapshot || typeof snapshot !== 'object') throw new UserError('Session history transaction must be an object.');
  const record = snapshot as Record<string, unknown>;
  if (record.type === 'append_items') {
    if (!hasExactly(record, ['type', 'items']) || !Array.isArray(record.items)) throw new UserError('Session history append transaction fields are invalid.');
    return { type: 'append_items', items: modelItems(record.items) };
  }
  if (record.type !== 'replace_suffix') throw new UserError('Unsupported session history transaction type.');
  if (!hasExactly(record, ['type', 'expectedSuffix', 'replacement']) || !Array.isArray(record.expectedSuffix) || !Array.isArray(record.replacement)) {
    throw new UserError('Session history suffix transaction fields are invalid.');
  }
  return { type: 'replace_suffix', expectedSuffix: modelItems(record.expectedSuffix), replacement: modelItems(record.replacement) };
}

function hasExactly(record: Record<string, unknown>, keys: string[]): boolean {
  return Object.keys(record).length === keys.length && keys.every((key) => Object.prototype.hasOwnProperty.call(record, key));
}

function modelItems(items: unknown[]): AgentInputItem[] {
  for (const item of items) {
    if (!protocol.ModelItem.safeParse(item).success) throw new UserError(INVALID_ITEMS);
    try {
      encodeItem(item);
    } catch {
      throw new UserError(INVALID_ITEMS);
    }
  }
  return items as AgentInputItem[];
}

/**
 * A copy made of plain data only: objects with the plain or no prototype
 * and enumerable data properties, dense arrays, primitives and byte arrays
 * (copied, so a shared buffer changed later does not change history).
 * Anything else throws.
 */
function snapshotValue(value: unknown, ancestors: WeakSet<object>): unknown {
  if (value === null || value === undefined || typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number') return value;
  if (typeof value !== 'object') throw new Error('unsupported value');
  if (value instanceof Uint8Array) {
    const keys = Reflect.ownKeys(value);
    if (keys.length !== value.length || keys.some((key) => typeof key !== 'string' || !isIndex(key, value.length))) throw new Error('unsupported binary');
    return new Uint8Array(value);
  }
  if (ancestors.has(value)) throw new Error('cyclic value');
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      const length = Object.getOwnPropertyDescriptor(value, 'length')?.value as unknown;
      const keys = Reflect.ownKeys(value);
      if (typeof length !== 'number' || !Number.isSafeInteger(length) || keys.length !== length + 1) throw new Error('unsupported array');
      if (keys.some((key) => typeof key !== 'string' || (key !== 'length' && !isIndex(key, length)))) throw new Error('unsupported array');
      const copy = new Array<unknown>(length);
      for (let index = 0; index < length; index++) {
        const descriptor = Object.getOwnPropertyDescriptor(value, String(index));
        if (!descriptor?.enumerable || !('value' in descriptor)) throw new Error('unsupported array item');
        copy[index] = snapshotValue(descriptor.value, ancestors);
      }
      return copy;
    }
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) throw new Error('unsupported object');
    const copy: Record<string, unknown> = {};
    for (const key of Reflect.ownKeys(value)) {
      if (typeof key !== 'string') throw new Error('unsupported property');
      const descriptor = Object.getOwnPropertyDescriptor(value, key);
      if (!descriptor?.enumerable || !('value' in descriptor)) throw new Error('unsupported property');
      Object.defineProperty(copy, key, { configurable: true, enumerable: true, writable: true, value: snapshotValue(descriptor.value, ancestors) });
    }
    return copy;
  } finally {
    ancestors.delete(value);
  }
}

function isIndex(key: string, length: number): boolean {
  if (!/^(0|[1-9]\d*)$/.test(key)) return false;
  const index = Number(key);
  return Number.isSafeInteger(index) && index < length;
}

/** Items in comparable form: two lists are the same history exactly when these texts are equal. */
export function comparable(items: readonly unknown[]): string {
  return canonicalText(items.map((item) => encodeItem(item)));
}

/** What a repeated operation id is checked against: the SHA-256 of the transaction's comparable form. */
export async function fingerprint(transaction: SessionHistoryTransaction): Promise<string> {
  const text = transaction.type === 'append_items' ? `append:${comparable(transaction.items)}` : `replace:${comparable(transaction.expectedSuffix)}:${comparable(transaction.replacement)}`;
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
