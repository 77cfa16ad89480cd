/**
 * Invariants: what the code relies on and a store in good order guarantees
 * (a record the task head names exists; an operation's recorded result has
 * the ids it was recorded with). A broken one is the service's fault, not
 * the caller's: it raises a 500 `internal_error` that names the invariant in
 * the log, never a TypeError from a missing value further on.
 *
 * @module
 */
import { AppError } from '../errors.js';

/** The error a broken invariant raises; its message names the invariant, for the log alone. */
export class InvariantError extends AppError {
  constructor(readonly invariant: string) {
    super('internal_error', { cause: new Error(`Invariant broken: ${invariant}`) });
  }
}

/** Returns `value`, or raises when it is absent: `invariant` says why it cannot be. */
export function present<T>(value: T | undefined | null, invariant: string): T {
  if (value === undefined || value === null) throw new InvariantError(invariant);
  return value;
}
