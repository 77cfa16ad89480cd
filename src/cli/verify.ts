/**
 * `baton verify [TASK]`: a task's audit chain, or every task's, checked over
 * HTTP or directly on a data directory that no server holds for writing.
 * Exit 0 only when every chain holds; the first break is named.
 *
 * @module
 */
import { AppError } from '../errors.js';
import type { ChainCheck } from '../domain/audit.js';
import type { Actor } from '../domain/commands.js';
import { listTasks, verifyAudit } from '../service/audit.js';
import type { ServiceContext } from '../service/context.js';
import { standaloneContext } from '../service/standalone.js';
import { Vault } from '../service/vault.js';
import { openStore } from '../store/open.js';
import { adoptKeyLayout } from '../service/repository/repository.js';
import { runTransaction } from '../service/transactions.js';
import { CliError, EXIT } from './errors.js';
import { json, server, type ServerOptions } from './http.js';

export interface VerifyOptions extends ServerOptions {
  dataDir?: string;
  tenant: string;
  /** With `dataDir`: the key file of a store encrypted at rest. */
  keyFile?: string;
}

interface Checker {
  tasks(): AsyncGenerator<string>;
  check(taskId: string): Promise<ChainCheck>;
  close(): Promise<void>;
}

function overHttp(options: VerifyOptions): Checker {
  const to = server(options);
  return {
    async *tasks() {
      let cursor: string | undefined;
      do {
        const page = await json<{ items: { taskId: string }[]; nextCursor?: string }>(to, 'GET', `/v1/tasks?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        for (const item of page.items) yield item.taskId;
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    },
    check: (taskId) => json<ChainCheck>(to, 'GET', `/v1/tasks/${encodeURIComponent(taskId)}/audit/verify`),
    close: async () => undefined,
  };
}

async function onDisk(dataDir: string, tenant: string, keyFile: string | undefined): Promise<Checker> {
  let store;
  try {
    store = await openStore({ store: 'lmdb', dataDir, fdbPrefix: '' });
  } catch (error) {
    throw new CliError(`The data directory ${dataDir} could not be opened (${(error as Error).message}).`, EXIT.unreachable);
  }
  let ctx: ServiceContext;
  try {
    ctx = standaloneContext(store, keyFile === undefined ? {} : { vault: Vault.fromFile(keyFile) });
  } catch (error) {
    await store.close();
    throw new CliError((error as Error).message, EXIT.usage);
  }
  try {
    await adoptKeyLayout((body) => runTransaction(ctx, body));
  } catch (error) {
    await store.close();
    throw new CliError(`The data directory ${dataDir} could not be read (${(error as Error).message}).`, EXIT.unreachable);
  }
  const actor: Actor = { tenant, role: 'auditor', subject: 'baton-cli' };
  return {
    async *tasks() {
      let cursor: string | undefined;
      do {
        const page = await listTasks(ctx, actor, 1000, cursor);
        for (const item of page.items) yield item.taskId;
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    },
    check: (taskId) =>
      verifyAudit(ctx, actor, taskId).catch((error: unknown) => {
        if (error instanceof AppError && error.code === 'encryption_key_missing') {
          throw new CliError(`The store's values are sealed with encryption key "${String(error.extra?.keyId)}": pass --key-file (or BATON_ENCRYPTION_KEY_FILE) naming a key file that has it.`, EXIT.usage);
        }
        throw error;
      }),
    close: () => store.close(),
  };
}

/** Runs the check; answers the exit code. */
export async function verify(taskId: string | undefined, options: VerifyOptions): Promise<number> {
  const checker = options.dataDir ? await onDisk(options.dataDir, options.tenant, options.keyFile) : overHttp(options);
  const progress = process.stderr.isTTY;
  let checked = 0;
  let entries = 0;
  try {
    const tasks = taskId !== undefined ? [taskId] : checker.tasks();
    for await (const id of tasks) {
      const result = await checker.check(id);
      checked += 1;
      entries += result.entries;
      if (progress) process.stderr.write(`\rverifying: ${checked} task${checked === 1 ? '' : 's'}, ${entries} entries`);
      if (!result.ok) {
        if (progress) process.stderr.write('\n');
        console.log(`BROKEN task ${id}: entry ${result.firstBrokenSeq ?? '?'}${result.reason ? ` (${result.reason})` : ''}`);
        return EXIT.failed;
      }
    }
  } finally {
    await checker.close();
  }
  if (progress) process.stderr.write('\n');
  console.log(`ok: ${checked} task${checked === 1 ? '' : 's'}, ${entries} audit entries, every chain holds`);
  return EXIT.ok;
}
