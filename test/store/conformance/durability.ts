import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { StoreInitializer } from './initializer.js';
import { freshStore } from './helpers.js';

const CHILD = fileURLToPath(new URL('./writer-child.ts', import.meta.url));

export function durabilitySpec(init: StoreInitializer): void {
  describe('durability', () => {
    const handle = freshStore(init);

    it('keeps every acknowledged write, blind writes included, after kill -9 of the writing process', async () => {
      const current = handle();
      await current.store.close();
      const acknowledged = await runAndKill(JSON.stringify(current.config), 300);
      expect(acknowledged.size).toBeGreaterThanOrEqual(300);

      const store = await current.reopen();
      const rows = await store.transact((tx) => tx.getPrefix(Buffer.from('ack/')));
      const present = new Set(rows.map((row) => Number(row.key.toString().slice(4))));
      const missing = [...acknowledged].filter((n) => !present.has(n));
      expect(missing).toEqual([]);
      for (const row of rows) expect(row.value.length).toBe(2048);
      const blind = await store.transact((tx) => tx.getPrefix(Buffer.from('blind/')), { readOnly: true });
      const blindPresent = new Set(blind.map((row) => Number(row.value.toString())));
      expect([...acknowledged].filter((n) => !blindPresent.has(n))).toEqual([]);
    }, 60_000);
  });
}

/** Runs the writer until it has acknowledged `count` writes, then SIGKILLs it mid-stream. */
function runAndKill(storeConfig: string, count: number): Promise<Set<number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      env: { ...process.env, BATON_TEST_STORE_CONFIG: storeConfig },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acknowledged = new Set<number>();
    let buffered = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) acknowledged.add(Number(line));
      if (acknowledged.size >= count && child.exitCode === null && !child.killed) child.kill('SIGKILL');
    });
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acknowledged);
      else reject(new Error(`The writer exited on its own (code ${code}): ${stderr}`));
    });
  });
}
