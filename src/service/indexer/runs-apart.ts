/**
 * Word runs apart: over LMDB, the word runs that the indexer's merges open
 * are written to an environment of their own (the store's companion `runs`, a
 * subdirectory of the data directory), not to the one the creates commit
 * to. A merged checkpoint opens ~7 runs, each a key under its word
 * (`repository/terms.ts`) and so a random leaf of a large B-tree: most of
 * a merge's pages. In one environment every create's commit queued behind
 * a merge's hundreds of pages and its fsync, and those were the open loop's
 * tails (`docs/performance.md`, "Word runs apart"). Apart, LMDB gives each
 * environment its own writer and file, so a create commits beside a merge.
 *
 * Two stores commit separately, so the order carries the guarantee:
 * - the runs a merge opens are committed apart before the merge's own
 *   transaction (which removes the entries from the pending list), so a
 *   search, reading the pending list on its snapshot first and the runs
 *   apart after, always finds a checkpoint in one or the other;
 * - runs a transaction removes (a purge, a change, a re-blinding pass) are
 *   cleared apart after it commits.
 * A crash between the two leaves a run apart that covers more than holds
 * its word, which `terms.ts` allows (search checks each record's words),
 * never a checkpoint that search cannot find.
 *
 * Over FoundationDB there is no companion: commits of unrelated keys are
 * independent there already, and the runs stay in the merge's transaction.
 *
 * @module
 */
import type { Config } from '../../config.js';
import type { KeyValue, Store } from '../../store/store.js';
import { runKeys, type RunsApart } from '../repository/repository.js';
import { runTransaction, type RunnerContext } from '../transactions.js';

/** The companion's name: its subdirectory in the data directory. */
export const RUNS_COMPANION = 'runs';

const READ_ONLY = { readOnly: true } as const;
/** No caller waits for a merge's runs, so no create's commit waits for them (`store.ts`). */
const BACKGROUND = { background: true } as const;

/** The companion that holds the runs apart, and whether merges write there now. */
export interface RunsApartStore {
  store: Store;
  /**
   * Whether the merges' runs go apart (`BATON_WORD_RUNS_APART`).
   * Off, the companion is still read and cleared: runs written apart
   * before stay found.
   */
  merges: boolean;
}

/** The runs apart over `store` (LMDB: its companion `runs`); undefined where the store has no companions (FoundationDB). */
export function runsApartStore(config: Pick<Config, 'wordRunsApart'>, store: Store): RunsApartStore | undefined {
  return store.companion === undefined ? undefined : { store: store.companion(RUNS_COMPANION), merges: config.wordRunsApart === 'on' };
}

/** The runner of transactions on the runs apart: the service's, over the companion. */
function apart(ctx: RunnerContext, store: Store): RunnerContext {
  return { ...ctx, store };
}

/** Reads of the runs apart as `TermRows` takes them: each the companion's latest commit. */
export function runsReader(ctx: RunnerContext & { runsApart?: RunsApartStore }): RunsApart | undefined {
  if (ctx.runsApart === undefined) return undefined;
  const runner = apart(ctx, ctx.runsApart.store);
  return {
    get: (key) => runTransaction(runner, (tx) => tx.get(key), READ_ONLY),
    getRange: (begin, end, limit): Promise<KeyValue[]> => runTransaction(runner, (tx) => tx.getRange(begin, end, { limit }), READ_ONLY),
  };
}

/** Commits runs a merge opens, apart, before the merge's own transaction. */
export async function writeApart(ctx: RunnerContext, store: Store, writes: readonly KeyValue[]): Promise<void> {
  if (writes.length === 0) return;
  await runTransaction(
    apart(ctx, store),
    async (tx) => {
      for (const { key, value } of writes) tx.set(key, value);
    },
    BACKGROUND,
  );
}

/**
 * Clears, apart, the runs a committed transaction removed. A failure is
 * logged and left: the runs it leaves cover checkpoints that no longer hold
 * their words, which search reads past.
 */
export async function clearApart(ctx: RunnerContext & { log: { warn(fields: object, message: string): void } }, store: Store, keys: readonly Buffer[]): Promise<void> {
  if (keys.length === 0) return;
  try {
    await runTransaction(
      apart(ctx, store),
      async (tx) => {
        for (const key of keys) tx.clear(key);
      },
      BACKGROUND,
    );
  } catch (error) {
    ctx.log.warn({ err: error, runs: keys.length }, 'runs kept apart were not cleared; search reads past them');
  }
}

/** Run keys a page of {@link clearPlainApart} reads. */
const CLEAR_PAGE = 1_000;

/**
 * Clears the runs of `tenant` kept apart whose word is written plain, page
 * by page: once a re-blinding pass has moved them beside the rest, blinded
 * (`terms.respell`), so that the compaction after the pass leaves no plain
 * word in the companion's file. Blind words (`~`…) are the ones a tenant
 * with encryption merges now, and stay.
 */
export async function clearPlainApart(ctx: RunnerContext, store: Store, tenant: string): Promise<void> {
  const keys = runKeys(tenant);
  let { begin } = keys;
  for (;;) {
    const rows = await runTransaction(apart(ctx, store), (tx) => tx.getRange(begin, keys.end, { limit: CLEAR_PAGE }), READ_ONLY);
    const plain = rows.filter(({ key }) => keys.plain(key)).map(({ key }) => key);
    if (plain.length > 0) {
      await runTransaction(
        apart(ctx, store),
        async (tx) => {
          for (const key of plain) tx.clear(key);
        },
        BACKGROUND,
      );
    }
    if (rows.length < CLEAR_PAGE) return;
    begin = Buffer.concat([rows.at(-1)!.key, Buffer.from([0])]);
  }
}
