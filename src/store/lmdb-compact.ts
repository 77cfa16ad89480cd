/**
 * The files of an LMDB store's compaction (`LmdbStore.compact`). LMDB never
 * overwrites a freed page until it reuses it, a page keeps a removed entry's
 * bytes in its free middle, and a branch page keeps a removed key as the
 * bound between two of its children: a value or an index key that a re-seal
 * replaced can stay readable in `data.mdb` long after. LMDB's own compacted
 * copy (`MDB_CP_COMPACT`) drops the free pages but copies the branch pages
 * as they are, so the copy here is made row by row instead: every live row of
 * each database written in key order into a fresh environment, whose pages
 * LMDB zeroes before use and whose bounds are live keys. Every byte of it is
 * then a live key or value, or LMDB's own structure. The copy is made in a
 * directory beside `data.mdb`, made durable, and renamed over it.
 *
 * @module
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Database, RootDatabase } from 'lmdb';

/** Where the copy is made, inside the data directory: the rename that replaces `data.mdb` stays on one file system. */
const COPY_DIR = 'compacting';
const DATA_FILE = 'data.mdb';
/** Rows per write of the copy: each is one LMDB transaction, and reads are served between them. */
const ROWS_PER_BATCH = 2_000;

/**
 * Writes every row of `sources` (each database by its name) into a fresh
 * environment, opened by `openAt`, in a directory inside `dir`; the store
 * must take no writes meanwhile.
 */
export async function writeCompactedCopy(sources: ReadonlyMap<string, Database<Buffer, Buffer>>, dir: string, openAt: (path: string) => RootDatabase): Promise<void> {
  const copyDir = join(dir, COPY_DIR);
  // A copy left by a crash mid-way is incomplete: start afresh.
  rmSync(copyDir, { recursive: true, force: true });
  mkdirSync(copyDir);
  const copy = openAt(copyDir);
  try {
    for (const [name, source] of sources) {
      const target = copy.openDB<Buffer, Buffer>({ name, keyEncoding: 'binary', encoding: 'binary' });
      let after: Buffer | undefined;
      for (;;) {
        const range = source.getRange({ ...(after === undefined ? {} : { start: after, exclusiveStart: true }), limit: ROWS_PER_BATCH });
        const rows = [...range].map(({ key, value }) => ({ key: Buffer.from(key), value: Buffer.from(value) }));
        if (rows.length === 0) break;
        await copy.batch(() => {
          for (const { key, value } of rows) void target.put(key, value);
        });
        after = rows[rows.length - 1]!.key;
        if (rows.length < ROWS_PER_BATCH) break;
      }
    }
  } finally {
    await copy.close();
  }
  fsyncPath(join(copyDir, DATA_FILE));
}

/**
 * What reads pass through so that the environment can be closed under
 * none: `hold` waits for the reads in progress and makes new ones wait until
 * `release`.
 */
export class ReadGate {
  private reading = 0;
  private idle: (() => void) | undefined;
  private held: Promise<void> | undefined;
  private reopen: (() => void) | undefined;

  async enter(): Promise<void> {
    while (this.held !== undefined) await this.held;
    this.reading += 1;
  }

  leave(): void {
    this.reading -= 1;
    if (this.reading === 0) this.idle?.();
  }

  /** Resolves once no read is in progress; later reads wait for {@link release}. */
  async hold(): Promise<void> {
    this.held = new Promise((resolve) => (this.reopen = resolve));
    if (this.reading > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    this.idle = undefined;
  }

  release(): void {
    this.held = undefined;
    this.reopen?.();
  }
}

/** Renames the copy over the store's `data.mdb` (the environment closed) and makes the rename durable. */
export function replaceWithCopy(dir: string): void {
  renameSync(join(dir, COPY_DIR, DATA_FILE), join(dir, DATA_FILE));
  fsyncPath(dir);
  rmSync(join(dir, COPY_DIR), { recursive: true, force: true });
}

/** Removes a copy a crash left before its rename: the store's own file is still whole. */
export function removeUnfinishedCopy(dir: string): void {
  if (existsSync(join(dir, COPY_DIR))) rmSync(join(dir, COPY_DIR), { recursive: true, force: true });
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
