/**
 * What a benchmark leaves on the machine, removed whatever happens: its temp
 * dirs, and a SIGINT/SIGTERM hook that runs the benchmark's cleanup before
 * exiting, so that an interrupted run leaves no LMDB files or servers behind.
 *
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Fresh directories under the OS temp dir (`TMPDIR`), named `<prefix>-<label>-XXXXXX`. */
export class TempDirs {
  private readonly dirs: string[] = [];

  constructor(private readonly prefix: string) {}

  make(label: string): string {
    const dir = mkdtempSync(join(tmpdir(), `${this.prefix}-${label}-`));
    this.dirs.push(dir);
    return dir;
  }

  /** Synchronous, so that it can also run from a process 'exit' handler. */
  removeAll(): void {
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

/** On the first SIGINT or SIGTERM: `announce` it (if given), run `cleanup`, exit with 130. */
export function onInterrupt(cleanup: () => void | Promise<void>, announce?: (signal: NodeJS.Signals) => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      announce?.(signal);
      void Promise.resolve()
        .then(cleanup)
        .finally(() => process.exit(130));
    });
  }
}

/**
 * Runs a benchmark's `main`: an error is printed and sets exit code 1; then
 * `cleanup` runs whatever happened, and the process ends within 2 s even if
 * something (a native client's thread, a socket) keeps the loop alive.
 */
export function runMain(main: () => Promise<void>, cleanup: () => void | Promise<void>): void {
  main()
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(async () => {
      await cleanup();
      setTimeout(() => process.exit(), 2_000).unref();
    });
}
