/**
 * One directory, one process (DESIGN §10): an LMDB data directory and a
 * write queue's directory each belong to the process that opened it. The
 * store serialises its writers, and the journal counts its records, inside
 * one process only, so a second process on the same directory would lose
 * and duplicate acknowledged writes.
 *
 * The lock is a socket in Linux's abstract namespace named after the
 * directory's device and inode: binding it is exclusive, and the kernel
 * releases it when the process ends however it ends (`kill -9` included), so
 * a restart never finds a stale lock. A file in the directory names the pid
 * that holds it, for the sentence a refused start prints. Where there is no
 * abstract namespace (not Linux), the file alone is the lock, and a pid that
 * no longer runs does not hold it.
 *
 * @module
 */
import { mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

/** The file in a locked directory that names the process holding it. */
export const LOCK_FILE = 'baton.lock';

/** A second process asked for a directory another one holds. */
export class DirectoryInUseError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number | undefined,
    what: string,
  ) {
    super(
      `${what} ${dir} is in use by another Baton process (pid ${pid ?? 'unknown'}); one directory belongs to one process: stop that process or give this one its own directory.`,
    );
    this.name = 'DirectoryInUseError';
  }
}

export interface DirectoryLock {
  readonly dir: string;
  release(): Promise<void>;
}

/**
 * Takes `dir` (created when missing) for this process, or throws
 * {@link DirectoryInUseError} naming the holder. `what` names the directory
 * in that sentence ("The data directory", "The write queue's directory").
 */
export async function lockDirectory(dir: string, what: string): Promise<DirectoryLock> {
  mkdirSync(dir, { recursive: true });
  const real = realpathSync(dir);
  const lockPath = join(real, LOCK_FILE);
  if (process.platform !== 'linux') return lockByFile(real, lockPath, what);
  const { dev, ino } = statSync(real, { bigint: true });
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(`\0baton-dir-lock:${dev}:${ino}`, () => resolve());
    });
  } catch (error) {
    server.close();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new DirectoryInUseError(real, await holderOf(lockPath), what);
    throw error;
  }
  // The lock must never keep the process alive.
  server.unref();
  writeFileSync(lockPath, `${process.pid}\n`);
  return {
    dir: real,
    release: () => closeServer(server),
  };
}

function lockByFile(real: string, lockPath: string, what: string): DirectoryLock {
  const holder = readPid(lockPath);
  if (holder !== undefined && holder !== process.pid && running(holder)) throw new DirectoryInUseError(real, holder, what);
  writeFileSync(lockPath, `${process.pid}\n`);
  return { dir: real, release: async () => undefined };
}

/** The holder writes its pid right after it binds: a start that lost the race by microseconds waits a moment for it. */
async function holderOf(lockPath: string): Promise<number | undefined> {
  for (let tries = 0; tries < 20; tries += 1) {
    const pid = readPid(lockPath);
    if (pid !== undefined && pid !== process.pid && running(pid)) return pid;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return readPid(lockPath);
}

function readPid(lockPath: string): number | undefined {
  try {
    const pid = Number(readFileSync(lockPath, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
