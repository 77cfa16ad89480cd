/**
 * Re-sealing one tenant's stored values with its newest key, one bounded
 * batch per transaction (`baton rekey`). A value sealed with another key, or
 * written plain before encryption was on, is opened and sealed again under
 * the same key as associated data. A checkpoint written plain had plain index
 * keys: they are replaced by blind ones in the same batch, and the words of
 * full-text search (the pending list's entries, then the word runs, keyed by
 * words too) are re-blinded at the end of the pass, so search finds it after
 * the pass and no plain word is left in the store.
 *
 * @module
 */
import { sealedKeyId } from '../../crypto/keyring.js';
import { readRecordBytes, TASK_INDEX_TAG, TASK_TAGS, writeRecordBytes, type Subspace } from '../../store/keyspace.js';
import type { Bytes, Transaction } from '../../store/store.js';
import { codecsFor, decodePlain, SEALED_SPACES, type Sealing } from './codec.js';
import { IndexRows } from './indexes.js';
import { TermRows, type RunsApart } from './terms.js';
import { keyspaceOf, type Keyspace } from './keyspace.js';
import { verifyStored, type StoredCheckpoint } from './records.js';
import { WriteBudget } from './write-budget.js';

/** The sealed spaces whose values are records (`writeRecord`: split over numbered chunks); the others hold one value per key. */
const RECORD_SPACES: ReadonlySet<string> = new Set(['checkpoints', 'revisions', 'tasks', 'handoffs', 'recoveries', 'leases', 'deadLetters']);

/**
 * The spaces a pass visits, in order: the sealed ones (the codec table says
 * which), then the full-text pending list, whose entries' words are
 * re-blinded where written plain, then the word runs, whose keys and
 * open-word lists re-blind words written plain.
 */
const SPACES: { name: keyof Keyspace; records: boolean }[] = [
  ...SEALED_SPACES.map((name) => ({ name, records: RECORD_SPACES.has(name) })),
  { name: 'pendingTerms', records: false },
  { name: 'taskTerms', records: false },
  { name: 'openTerms', records: false },
  // Last, so that a pass recorded by an earlier release (by the index of its space) resumes where it was.
  { name: 'pendingList', records: false },
];

/** A word of the index as written plain: blind words start with `~`, which no plain word holds. */
const plainWord = (word: string): boolean => !word.startsWith('~');

/** Where a pass over one tenant stands: the space it is in and the key it resumes after. */
export interface ResealPosition {
  space: number;
  after?: Bytes;
}

export interface ResealBatch {
  /** Undefined when the tenant is done. */
  next: ResealPosition | undefined;
  scanned: number;
  resealed: number;
  reindexed: number;
}

const ROWS_PER_BATCH = 200;
const AFTER = Buffer.from([0x00]);
const FF = Buffer.from([0xff]);

/** One batch of the pass over `tenant`, from `at`, sealing with `keyId` (the key `sealing` seals with). */
export async function resealBatch(tx: Transaction, tenant: string, sealing: Sealing, keyId: string, at: ResealPosition, apart?: RunsApart): Promise<ResealBatch> {
  const ks = keyspaceOf(tenant);
  const budget = new WriteBudget(tx);
  const out: ResealBatch = { next: at, scanned: 0, resealed: 0, reindexed: 0 };
  const visited = SPACES[at.space]!;
  // In the `task` layout a task's own spaces share one range, visited once, at the first of them.
  const local = ks.layout === 'task' && TASK_LOCAL.has(visited.name);
  if (local && visited.name !== FIRST_TASK_LOCAL) return { ...out, next: nextSpace(at) };
  const range = local ? ks.taskLocal.range() : (ks[visited.name] as Subspace).range();
  const rows = await tx.getRange(at.after === undefined ? range.begin : Buffer.concat([at.after, AFTER]), range.end, { limit: ROWS_PER_BATCH });
  const terms = new TermRows(tx, ks, codecsFor(sealing), sealing, tenant, apart);
  for (const row of rows) {
    if (out.scanned > 0 && !budget.allows(row.value.length + 200)) return out;
    const found = local ? taskLocalSpace(ks, row.key) : visited;
    out.scanned += 1;
    out.next = { space: at.space, after: row.key };
    // The task-local rows that hold no sealed value: the history, and the `task` index's entries (plain task ids).
    if (found === undefined || (local && !SEALED_TASK_LOCAL.has(found.name))) continue;
    const { name, records } = found;
    const space = ks[name] as Subspace;
    if (name === 'pendingTerms' || name === 'pendingList') {
      const entry = await terms.pending.get(...terms.pending.positionOf(row.key));
      if (entry === undefined) continue;
      const index = entry.index.map((deferred) => IndexRows.spelled(deferred, sealing));
      if (entry.words.some(plainWord) || index.some((deferred, i) => deferred !== entry.index[i])) {
        terms.pending.rewrite(entry, entry.words.map((word) => (plainWord(word) ? sealing.blind(word) : word)), index);
      }
      continue;
    }
    if (name === 'taskTerms') {
      await terms.respell(row.key, row.value, (word) => (plainWord(word) ? sealing.blind(word) : undefined));
      continue;
    }
    if (name === 'openTerms') {
      const taskId = space.unpack(row.key)[0] as string;
      const open = await terms.openRuns(taskId);
      if ([...open.keys()].some(plainWord)) terms.writeOpenRuns(taskId, new Map([...open].map(([word, start]) => [plainWord(word) ? sealing.blind(word) : word, start])));
      continue;
    }
    if (!records) {
      if (name === 'meta' && row.key.equals(ks.meta.pack('format'))) continue;
      if (sealedKeyId(row.value) === keyId) continue;
      const aad = name === 'events' ? space.prefix : row.key;
      tx.set(row.key, sealing.seal(sealing.open(row.value, aad), aad));
      out.resealed += 1;
      continue;
    }
    const parts = space.unpack(row.key);
    const chunk = parts[parts.length - 1] as number;
    if (chunk > 1) continue;
    const recordParts = parts.slice(0, -1);
    const base = space.pack(...recordParts);
    const whole = chunk === 0 ? row.value : await readRecordBytes(tx, space, recordParts);
    if (whole === undefined) continue;
    const keyOfValue = sealedKeyId(whole);
    if (keyOfValue === keyId) continue;
    const plain = sealing.open(whole, base);
    await writeRecordBytes(tx, space, recordParts, sealing.seal(plain, base));
    out.resealed += 1;
    if (name === 'checkpoints' && keyOfValue === undefined) out.reindexed += await reindex(tx, ks, sealing, plain);
    // A split record's later chunks were just rewritten: resume after all of them.
    if (chunk === 1) out.next = { space: at.space, after: Buffer.concat([base, FF]) };
  }
  if (rows.length < ROWS_PER_BATCH) out.next = nextSpace(at);
  return out;
}

function nextSpace(at: ResealPosition): ResealPosition | undefined {
  return at.space + 1 < SPACES.length ? { space: at.space + 1 } : undefined;
}

/** The task-local spaces of the `task` layout (`keyspace.ts`), by their tags. */
const TASK_LOCAL: ReadonlySet<string> = new Set(Object.keys(TASK_TAGS));
const BY_TAG = new Map<string, keyof typeof TASK_TAGS>(Object.entries(TASK_TAGS).map(([name, tag]) => [tag, name as keyof typeof TASK_TAGS]));
const SEALED_TASK_LOCAL: ReadonlySet<string> = new Set(SEALED_SPACES.filter((name) => TASK_LOCAL.has(name)));
/** Where a pass of the `task` layout visits the task-local range: the first of those spaces it lists. */
const FIRST_TASK_LOCAL = SPACES.find((entry) => TASK_LOCAL.has(entry.name))!.name;

/** The task-local space a key of `("tk", taskId, tag, …)` belongs to; undefined for the `task` index's entries. */
function taskLocalSpace(ks: Keyspace, key: Bytes): { name: keyof Keyspace; records: boolean } | undefined {
  const tag = ks.taskLocal.unpack(key)[1] as string;
  if (tag === TASK_INDEX_TAG) return undefined;
  const name = BY_TAG.get(tag);
  if (name === undefined) throw new Error(`A task-local key has a tag this version does not know (${tag}).`);
  return { name, records: RECORD_SPACES.has(name) };
}

/** A checkpoint's plain index keys replaced by blind ones; 1 when it was readable. */
async function reindex(tx: Transaction, ks: Keyspace, sealing: Sealing, plain: Buffer): Promise<number> {
  const verified = verifyStored(decodePlain<StoredCheckpoint>(plain));
  if (!verified.ok) return 0;
  const checkpoint = verified.doc.checkpoint;
  await new IndexRows(tx, ks.index, codecsFor(undefined), undefined).moveTo(new IndexRows(tx, ks.index, codecsFor(sealing), sealing), checkpoint);
  return 1;
}
