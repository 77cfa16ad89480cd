/**
 * Opaque page cursors: base64url JSON that the service alone reads back. A
 * cursor that does not decode to what the list expects is a 400.
 *
 * @module
 */
import { AppError } from '../errors.js';

export function encodeCursor(position: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

export function decodeCursor<T>(cursor: string | undefined, check: (value: unknown) => value is T): T | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new AppError('invalid_cursor');
  }
  if (!check(value)) throw new AppError('invalid_cursor');
  return value;
}

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}
