/**
 * Index maintenance (`IndexRows.update`) on a real LMDB store: the keys it
 * writes are byte for byte the tuple keys `(name, value, createdAt, id)`
 * that search scans (it packs them from parts made once, for speed), and
 * after any insert, change or removal the index holds exactly the entries of
 * the checkpoint as it now is.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCheckpoint } from '../../../src/domain/changes.js';
import { checkpointInput, type Checkpoint } from '../../../src/domain/checkpoint.js';
import { indexEntries, INDEX_NAMES, IndexRows } from '../../../src/service/repository/indexes.js';
import { codecsFor } from '../../../src/service/repository/codec.js';
import { keyspaceOf } from '../../../src/service/repository/keyspace.js';
import { decodeValue, encodeValue } from '../../../src/store/keyspace.js';
import { LmdbStore } from '../../../src/store/lmdb.js';

const TENANT = 'tenant-indexes';
const { index, root } = keyspaceOf(TENANT);

let dir: string;
let store: LmdbStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'baton-indexes-'));
  store = LmdbStore.open({ path: dir });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function checkpoint(fields: Record<string, unknown>, id = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', at = '2025-03-01T10:00:00.000Z'): Checkpoint {
  const input = checkpointInput.parse({ taskId: 'task-\u00e9', agentId: 'agent-1', agentType: 'builder', ...fields });
  return buildCheckpoint(input, id, at);
}

/** Text, labels and paths that exercise the tuple encoding: non-ASCII, NUL (escaped in a tuple) and a value long enough to be hashed. */
const rich = checkpoint({
  executionState: {
    phase: 'implementing',
    completedItems: [{ id: 'step-1', description: 'Add the lease table to the keyspace', files: { created: ['src/naïve\u0000path.ts'] } }],
    currentFocus: `Ünïcode focus ${'x'.repeat(300)}`,
  },
  contextSummary: { keyDecisions: [{ decision: 'Use LMDB', rationale: 'embedded and durable' }] },
  labels: { team: 'core', priority: 3, key: 'v\u0000al', long: 'y'.repeat(300) },
  metrics: { filesModified: ['src/errors.ts'] },
});

/** What search expects: `index.pack(name, value, createdAt, id)` → taskId, for every entry. */
function expected(c: Checkpoint): Map<string, string> {
  return new Map(indexEntries(c).map(([name, value]) => [index.pack(name, value, c.createdAt, c.id).toString('hex'), c.taskId]));
}

/** Every row of the tenant's index, as stored (the `task` index's among its task's rows in the `task` layout). */
async function stored(): Promise<Map<string, string>> {
  return store.transact(async (tx) => {
    const rows = (await tx.getRange(root.prefix, Buffer.concat([root.prefix, Buffer.from([0xff])]))).filter((row) => index.contains(row.key));
    return new Map(rows.map((row) => [row.key.toString('hex'), decodeValue<string>(row.value)]));
  });
}

const update = (before: Checkpoint | undefined, after: Checkpoint | undefined) =>
  store.transact(async (tx) => new IndexRows(tx, index, codecsFor(undefined), undefined).update(before, after));

describe('IndexRows.update', () => {
  it('inserts exactly the keys index.pack makes, byte for byte, each naming the task', async () => {
    await update(undefined, rich);
    const rows = await stored();
    expect(rows).toEqual(expected(rich));
    expect([...rows.keys()].some((key) => key.includes(Buffer.from('sha256:').toString('hex')))).toBe(true);
    expect(rows.has(index.pack('label', 'key=v\u0000al', rich.createdAt, rich.id).toString('hex'))).toBe(true);
    // Paths are indexed as runs (`terms.ts`), no longer here.
    expect([...rows.keys()].some((key) => key.startsWith(index.pack('file').toString('hex')))).toBe(false);
  });

  it('clears the file entries an earlier release wrote when the checkpoint goes, and a re-blinding move keeps only those that exist', async () => {
    const legacy = indexEntries(rich, true).filter(([name]) => name === 'file');
    expect(legacy.length).toBe(2);
    const [kept, ...rest] = legacy;
    await update(undefined, rich);
    await store.transact(async (tx) => {
      tx.set(index.pack(kept![0], kept![1], rich.createdAt, rich.id), encodeValue(rich.taskId));
    });
    await store.transact(async (tx) => {
      const plain = new IndexRows(tx, index, codecsFor(undefined), undefined);
      await plain.moveTo(new IndexRows(tx, index, codecsFor(undefined), undefined), rich);
    });
    const moved = await stored();
    expect(moved.has(index.pack(kept![0], kept![1], rich.createdAt, rich.id).toString('hex'))).toBe(true);
    for (const [name, value] of rest) expect(moved.has(index.pack(name, value, rich.createdAt, rich.id).toString('hex'))).toBe(false);
    await update(rich, undefined);
    expect(await stored()).toEqual(new Map());
  });

  it('after a change holds the new entries only: a removed word, label or path is cleared, an added one written', async () => {
    await update(undefined, rich);
    const changed: Checkpoint = {
      ...rich,
      version: 2,
      executionState: { ...rich.executionState, phase: 'testing', currentFocus: 'Wiring the fencing check' },
      labels: { team: 'web' },
    };
    await update(rich, changed);
    expect(await stored()).toEqual(expected(changed));
    const before = expected(rich);
    expect([...(await stored()).keys()].filter((key) => !before.has(key)).length).toBeGreaterThan(0);
  });

  it('changes nothing when the entries stay the same (a finalize keeps every term)', async () => {
    await update(undefined, rich);
    const written = await store.transact(async (tx) => {
      new IndexRows(tx, index, codecsFor(undefined), undefined).update(rich, { ...rich, version: 2, updatedAt: '2025-03-01T11:00:00.000Z' });
      return tx.stats().bytesWritten;
    });
    expect(written).toBe(0);
    expect(await stored()).toEqual(expected(rich));
  });

  it('moves every entry when the id or creation time differs', async () => {
    await update(undefined, rich);
    const moved: Checkpoint = { ...rich, createdAt: '2025-03-02T10:00:00.000Z' };
    await update(rich, moved);
    expect(await stored()).toEqual(expected(moved));
  });

  it('clears every entry of a removed checkpoint, and only its own', async () => {
    const other = checkpoint({ executionState: { completedItems: ['Add the lease table'] } }, '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c');
    await update(undefined, rich);
    await update(undefined, other);
    await update(rich, undefined);
    expect(await stored()).toEqual(expected(other));
  });
});

it('docs/keyspace.md documents every index, and no other', () => {
  const doc = readFileSync(new URL('../../../docs/keyspace.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Secondary indexes'), doc.indexOf('## System spaces'));
  const documented = [...section.matchAll(/^\| `([a-zA-Z]+)` \|/gm)].map((m) => m[1]);
  expect(documented.sort()).toEqual([...INDEX_NAMES].sort());
});
