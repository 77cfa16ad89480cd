/**
 * What each FoundationDB error (`flow/error_definitions.h`) means to the
 * port. The retriable ones are those FDB's own `onError` retries; they reach
 * here only when the retry loop gave up. Codes not listed are `internal`,
 * except 1100–1199 (broken promises, cancelled operations), which are
 * transient. `docs/foundationdb.md` shows the same table.
 *
 * @module
 */
import type { FdbBinding } from './fdb-binding.js';
import { StoreError, type StoreErrorCode } from './store.js';

const FDB_ERRORS: ReadonlyMap<number, StoreErrorCode> = new Map(
  (
    [
      // not_committed: another transaction wrote what this one read.
      ['conflict', [1020]],
      // commit_unknown_result; cluster_version_changed: either way the commit may have landed.
      ['commit_unknown', [1021, 1039]],
      // timed_out; transaction_timed_out, the `timeout` option running out (during a commit
      // the store reports `commit_unknown` instead); transaction_too_old, a body that kept
      // its read version past 5 s on every attempt, which running it again will not fix.
      ['timeout', [1004, 1031, 1007]],
      // future_version, connection_failed, process_behind, database_locked, lookup_failed,
      // commit/GRV proxy memory limits, and the throttles: batch, tag, proxy tag, hot shard.
      ['unavailable', [1009, 1026, 1037, 1038, 1041, 1042, 1078, 1211, 1051, 1213, 1223, 1235]],
      // transaction_too_large, key_too_large, value_too_large.
      ['too_large', [2101, 2102, 2103]],
      // Cluster file not found or unreadable; network set up wrongly; protocol or client
      // mismatch; connection string invalid; TLS; API version not supported.
      ['not_configured', [1511, 1513, 1515, 2008, 2009, 2022, 2025, 2100, 2104, 2107, 2125, 2203]],
    ] as const
  ).flatMap(([kind, codes]) => codes.map((code) => [code, kind] as [number, StoreErrorCode])),
);

/** transaction_timed_out: raised during a commit, the commit may still have landed. */
const TRANSACTION_TIMED_OUT = 1031;

export const MESSAGES: Record<StoreErrorCode, string> = {
  conflict: 'The transaction could not commit before its retries ran out; it may be tried again.',
  commit_unknown: 'FoundationDB could not tell whether the transaction committed.',
  timeout: 'The transaction ran past its time limit.',
  unavailable: 'FoundationDB is not available.',
  too_large: 'A key, value or transaction is larger than FoundationDB allows.',
  no_space: 'The FoundationDB cluster has no room for the commit.',
  not_configured: 'The FoundationDB client or cluster file is not configured correctly.',
  internal: 'FoundationDB reported an unexpected error.',
};

/** Turns an `FDBError` into a {@link StoreError}; anything else, such as a body's own error, is returned as is. */
export function translate(fdb: Pick<FdbBinding, 'FDBError'>, error: unknown): unknown {
  if (!(error instanceof fdb.FDBError)) return error;
  const code = FDB_ERRORS.get(error.code) ?? (error.code >= 1100 && error.code < 1200 ? 'unavailable' : 'internal');
  return new StoreError(code, MESSAGES[code], { cause: error, backendCode: error.code });
}

/**
 * What ended a transaction's retry loop, as {@link translate} says, except
 * that a timeout striking while the transaction was `committing` leaves the
 * commit's outcome unknown, as 1021 does.
 */
export function translateFailure(fdb: Pick<FdbBinding, 'FDBError'>, error: unknown, committing: boolean): unknown {
  if (committing && error instanceof fdb.FDBError && error.code === TRANSACTION_TIMED_OUT) {
    return new StoreError('commit_unknown', MESSAGES.commit_unknown, { cause: error, backendCode: error.code });
  }
  return translate(fdb, error);
}
