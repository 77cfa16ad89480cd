/**
 * Which key layout a store holds ({@link KeyLayout}), read from the store
 * when a process opens it: `("baton-system", "lay")` → `{ layout }`. A store
 * without the row is looked at: one whose tasks are in their own `task`
 * space was written by a release before format 9 and keeps the `spaces`
 * layout; any other (a new store, or one a process filled without the
 * service, in the `task` layout) is in the `task` layout (store format 9).
 * The row then says so. A layout never changes once written.
 *
 * @module
 */
import * as tuple from 'fdb-tuple';
import { decodeValue, encodeValue, keyLayout, SPACES, systemKeyspace, unknownLayout, useKeyLayout, type KeyLayout } from '../../store/keyspace.js';
import { prefixEnd, type Transaction, type TransactionBody } from '../../store/store.js';

export type { KeyLayout };

/** Every tenant's data: `("baton", tenant, …)` (`("baton-system", …)` sorts apart). */
const TENANTS_PREFIX = tuple.pack(['baton']);

/**
 * Reads the store's layout (written first when the store has none) and packs
 * keys in it from now on; `run` runs a write transaction (the service's
 * runner).
 */
export async function adoptKeyLayout(run: (body: TransactionBody<KeyLayout>) => Promise<KeyLayout>): Promise<KeyLayout> {
  const layout = await run(readOrChooseLayout);
  useKeyLayout(layout);
  return layout;
}

/** The layout this process packs keys in, for a thread of it that packs them too; refused while the store has not answered. */
export function servedKeyLayout(): KeyLayout {
  const layout = keyLayout();
  if (layout === 'unknown') throw unknownLayout();
  return layout;
}

/** Packs keys in `layout` from now on: a thread of the process (the merge thread), told the layout the process serves. */
export function packInLayout(layout: KeyLayout): void {
  useKeyLayout(layout);
}

/** No key is packed until {@link adoptKeyLayout} succeeds: the store could not be read when the process started. */
export function forgetKeyLayout(): void {
  useKeyLayout('unknown');
}

/** The store's layout, the row written first when the store has none. */
async function readOrChooseLayout(tx: Transaction): Promise<KeyLayout> {
  const key = systemKeyspace().layout.prefix;
  const marker = await tx.get(key);
  if (marker !== undefined) return layoutIn(marker);
  const chosen = await layoutOfTasks(tx);
  tx.set(key, encodeValue({ layout: chosen }));
  return chosen;
}

/**
 * The layout the store's tasks are in, found by looking: the first tenant
 * that has a task says, by where its tasks are listed (`tl` in the `task`
 * layout, the heads' own `task` space in `spaces`). A store with no task in
 * either is new to both, and is given the `task` layout.
 */
async function layoutOfTasks(tx: Transaction): Promise<KeyLayout> {
  let from = TENANTS_PREFIX;
  const end = prefixEnd(TENANTS_PREFIX);
  for (;;) {
    const [first] = await tx.getRange(from, end, { limit: 1 });
    if (first === undefined) return 'task';
    const tenant = String(tuple.unpack(first.key)[1]);
    const listed = (space: string): Promise<boolean> => {
      const prefix = tuple.pack(['baton', tenant, space]);
      return tx.getRange(prefix, prefixEnd(prefix), { limit: 1 }).then((rows) => rows.length > 0);
    };
    if (await listed(SPACES.taskList)) return 'task';
    if (await listed(SPACES.tasks)) return 'spaces';
    from = prefixEnd(tuple.pack(['baton', tenant]));
  }
}

function layoutIn(marker: Buffer): KeyLayout {
  const { layout } = decodeValue<{ layout?: unknown }>(marker);
  if (layout === 'task' || layout === 'spaces') return layout;
  throw new Error(`The store names a key layout this version does not know (${String(layout)}): it was written by a newer Baton.`);
}
