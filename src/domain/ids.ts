/**
 * Identifiers: UUIDv7, time-ordered, minted by the service before a
 * transaction starts (bodies may run twice; ids must not change).
 *
 * @module
 */
import { v7 } from 'uuid';

export function newId(): string {
  return v7();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
