/**
 * What FoundationDB's errors become, from the binding's own error objects
 * (`test/support/fdb-error.ts`) to the answer a caller gets: 1020
 * not_committed is a conflict, tried again until it commits; 1021
 * commit_unknown_result is an unknown outcome, tried again through the
 * operation record; 1007 transaction_too_old is a timeout, answered at once;
 * 1031 transaction_timed_out is a timeout, except during the commit, where
 * the outcome is unknown. The runner's half runs over a real LMDB store
 * wrapped to fail its first attempts with the translated error.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { createMetrics } from '../../src/metrics.js';
import { runTransaction } from '../../src/service/transactions.js';
import { translate, translateFailure } from '../../src/store/fdb-errors.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { StoreError, type Store, type TransactionBody, type TransactOptions } from '../../src/store/store.js';
import { FDBError, fdbError } from '../support/fdb-error.js';

const binding = { FDBError };

describe('an FDBError as the store reports it', () => {
  it.each([
    [1020, false, 'conflict', true],
    [1021, false, 'commit_unknown', true],
    [1021, true, 'commit_unknown', true],
    [1007, false, 'timeout', false],
    [1007, true, 'timeout', false],
    [1031, false, 'timeout', false],
    [1031, true, 'commit_unknown', true],
    [2101, true, 'too_large', false],
    [1101, false, 'unavailable', true],
    [4100, false, 'internal', false],
  ] as const)('%i (committing: %s) is %s, retriable %s', (code, committing, expected, retriable) => {
    const error = fdbError(code);
    expect(error).toBeInstanceOf(FDBError);
    const failure = translateFailure(binding, error, committing) as StoreError;
    expect(failure).toBeInstanceOf(StoreError);
    expect(failure).toMatchObject({ code: expected, retriable, backendCode: code });
    expect(failure.cause).toBe(error);
    // The message is the store's own sentence, never the cluster's words.
    expect(failure.message).not.toBe(error.message);
    if (!committing) expect(translate(binding, error)).toMatchObject({ code: expected });
  });

  it('leaves anything that is not an FDBError as it is: a body’s own error, even one carrying a code', () => {
    const own = Object.assign(new Error('The body refused.'), { code: 1020 });
    expect(translateFailure(binding, own, true)).toBe(own);
    const app = new AppError('not_found');
    expect(translate(binding, app)).toBe(app);
  });
});

/** The real store, whose next `failures` write attempts fail with `error` instead of committing. */
class FailingFirst implements Store {
  constructor(
    private readonly inner: Store,
    private failures: number,
    private readonly error: () => unknown,
  ) {}
  get name(): Store['name'] {
    return this.inner.name;
  }
  get commitOutcomeKnown(): boolean {
    return this.inner.commitOutcomeKnown;
  }
  async transact<T>(body: TransactionBody<T>, options?: TransactOptions): Promise<T> {
    if (options?.readOnly !== true && this.failures > 0) {
      this.failures -= 1;
      throw this.error();
    }
    return this.inner.transact(body, options);
  }
  ping(): Promise<void> {
    return this.inner.ping();
  }
  compact(): Promise<boolean> {
    return this.inner.compact();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

describe('an FDBError as the runner answers it', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function run(failures: number, code: number, committing: boolean): Promise<{ outcome: unknown; written: boolean; retries: string }> {
    const dir = mkdtempSync(join(tmpdir(), 'baton-fdb-errors-'));
    dirs.push(dir);
    const lmdb = LmdbStore.open({ path: dir });
    const store = new FailingFirst(lmdb, failures, () => translateFailure(binding, fdbError(code), committing));
    const metrics = createMetrics();
    const ctx = { store, metrics, transactionDeadlineMs: 2_000 };
    const key = Buffer.from('written');
    try {
      const outcome = await runTransaction(ctx, async (tx) => tx.set(key, Buffer.from('once'))).then(
        () => 'committed',
        (error: unknown) => error,
      );
      const written = (await lmdb.transact(async (tx) => tx.get(key), { readOnly: true })) !== undefined;
      const retries = (await metrics.registry.getSingleMetricAsString('store_retries_total')).split('\n').filter((line) => / [1-9]\d*$/.test(line)).join('\n');
      return { outcome, written, retries };
    } finally {
      await lmdb.close();
    }
  }

  it('tries a 1020 conflict again until it commits', async () => {
    expect(await run(2, 1020, true)).toEqual({ outcome: 'committed', written: true, retries: 'store_retries_total{code="conflict"} 2' });
  });

  it('tries a 1021 unknown outcome again', async () => {
    expect(await run(1, 1021, true)).toEqual({ outcome: 'committed', written: true, retries: 'store_retries_total{code="commit_unknown"} 1' });
  });

  it('tries a 1031 that struck during the commit again, as an unknown outcome', async () => {
    expect(await run(1, 1031, true)).toEqual({ outcome: 'committed', written: true, retries: 'store_retries_total{code="commit_unknown"} 1' });
  });

  it.each([
    [1007, true],
    [1031, false],
  ])('answers %i (committing: %s) at once, 503 store_unavailable, without trying again', async (code, committing) => {
    const { outcome, written, retries } = await run(1, code, committing);
    expect(outcome).toBeInstanceOf(AppError);
    expect(outcome).toMatchObject({ code: 'store_unavailable', status: 503 });
    expect(((outcome as AppError).cause as StoreError).backendCode).toBe(code);
    expect(written).toBe(false);
    expect(retries).toBe('');
  });
});
