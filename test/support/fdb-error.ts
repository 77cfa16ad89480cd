/**
 * The `foundationdb` binding's error class, for tests of what the store
 * makes of FoundationDB's errors without a cluster or `libfdb_c`. The class
 * is plain JavaScript in the package (`dist/lib/error.js` in 2.0.1) and
 * loads without the native library: where the package is installed, its own
 * class is used. Where it is not (it is an optional dependency), errors come
 * from a class written exactly as that file writes it, constructor and
 * prototype alike. Either way each error is made as the native binding
 * makes it (its `src/error.cpp`): `new FDBError(fdb_get_error(code), code)`,
 * with the client library's own description of the code.
 */
import { createRequire } from 'node:module';

type FdbErrorClass = new (description: string, code: number) => Error & { code: number };

/** The class of `foundationdb` 2.0.1's `dist/lib/error.js`, line for line. */
class FDBErrorAsInBinding extends Error {
  code: number;
  constructor(description: string, code: number) {
    super(description);
    Object.setPrototypeOf(this, FDBErrorAsInBinding.prototype);
    this.code = code;
  }
}

function installedClass(): FdbErrorClass | undefined {
  try {
    return (createRequire(import.meta.url)('foundationdb/dist/lib/error.js') as { default: FdbErrorClass }).default;
  } catch {
    return undefined;
  }
}

const installed = installedClass();

/** Whether the errors below are the installed package's own class, or the copy of it. */
export const FROM_INSTALLED_PACKAGE = installed !== undefined;

export const FDBError: FdbErrorClass = installed ?? FDBErrorAsInBinding;

/** What `fdb_get_error` answers for the codes the tests use (`flow/error_definitions.h`). */
const DESCRIPTIONS: Readonly<Record<number, string>> = {
  1007: 'Transaction is too old to perform reads or be committed',
  1020: 'Transaction not committed due to conflict with another transaction',
  1021: 'Transaction may or may not have committed',
  1031: 'Operation aborted because the transaction timed out',
  1101: 'Asynchronous operation cancelled',
  2101: 'Transaction exceeds byte limit',
  4100: 'An internal error occurred',
};

/** An error as the binding delivers FoundationDB's error `code`. */
export function fdbError(code: number): Error & { code: number } {
  const description = DESCRIPTIONS[code];
  if (description === undefined) throw new Error('No description of this FoundationDB error code is kept here.');
  return new FDBError(description, code);
}
