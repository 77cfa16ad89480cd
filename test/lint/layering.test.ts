/**
 * The import rules of docs/architecture.md are enforced by the lint step;
 * this checks that the rules really fire, so a broken config cannot let a
 * service file reach the key layout unnoticed.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

async function restricted(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layering rules', () => {
  it('refuse the key layout outside the repository', async () => {
    const source = "import { tenantKeyspace } from '../store/keyspace.js';\nexport const ks = tenantKeyspace('t');\n";
    expect(await restricted('src/service/new-feature.ts', source)).toEqual([expect.stringContaining('Only src/service/repository/ knows the key layout')]);
    expect(await restricted('src/http/routes/new-route.ts', source.replace('../store', '../../store'))).toHaveLength(1);
    expect(await restricted('src/service/repository/new-rows.ts', source.replace('../store', '../../store'))).toEqual([]);
  });

  it('refuse store adapters above the store, even in the repository', async () => {
    const source = "import { LmdbStore } from '../../store/lmdb.js';\nexport const s = LmdbStore;\n";
    expect(await restricted('src/service/repository/new-rows.ts', source)).toEqual([expect.stringContaining('src/store/open.ts chooses one')]);
    expect(await restricted('src/store/open-more.ts', source.replace('../../store/', './'))).toEqual([]);
  });

  it('keep the LangGraph adapter to the client', async () => {
    const source = "import { execute } from '../service/execute.js';\nexport const e = execute;\n";
    expect(await restricted('src/langgraph/new-part.ts', source)).toEqual([expect.stringContaining('through src/client/')]);
    expect(await restricted('src/langgraph/new-part.ts', "import { BatonClient } from '../client/index.js';\nexport const c = BatonClient;\n")).toEqual([]);
  });

  it('keep every framework adapter to the client', async () => {
    const service = "import { execute } from '../service/execute.js';\nexport const e = execute;\n";
    const client = "import { BatonClient } from '../client/index.js';\nexport const c = BatonClient;\n";
    for (const folder of ['openai-agents', 'a2a', 'langgraph-api']) {
      expect(await restricted(`src/${folder}/new-part.ts`, service)).toEqual([expect.stringContaining(`src/${folder}/ talks to Baton through src/client/`)]);
      expect(await restricted(`src/${folder}/new-part.ts`, client)).toEqual([]);
    }
  });

  it('keep the console to the client, the event names and types of the server', async () => {
    const hash = "import { canonicalJson } from '../../src/domain/hash.js';\nexport const c = canonicalJson;\n";
    expect(await restricted('console/src/new-view.ts', hash)).toEqual([expect.stringContaining('console/ reaches Baton through src/client/')]);
    expect(await restricted('console/src/new-view.ts', "import type { Checkpoint } from '../../src/domain/checkpoint.js';\nexport type C = Checkpoint;\n")).toEqual([]);
    expect(await restricted('console/src/new-view.ts', "import { BatonClient } from '../../src/client/client.js';\nexport const c = BatonClient;\n")).toEqual([]);
    expect(await restricted('console/src/new-view.ts', "import { EVENT_TYPES } from '../../src/domain/events.js';\nexport const e = EVENT_TYPES;\n")).toEqual([]);
  });
});

async function messages(filePath: string, source: string, rule: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === rule).map((m) => m.message);
}

describe('every "never" of docs/architecture.md', () => {
  it('keeps domain/ free of every other layer', async () => {
    expect(await restricted('src/domain/new-rule.ts', "import { AppError } from '../errors.js';\nexport const e = AppError;\n")).toEqual([expect.stringContaining('imports nothing of ours')]);
    expect(await restricted('src/domain/new-rule.ts', "import { sha256Hex } from './hash.js';\nexport const h = sha256Hex;\n")).toEqual([]);
  });

  it('keeps the store from everything above it', async () => {
    expect(await restricted('src/store/new-store.ts', "import { execute } from '../service/execute.js';\nexport const e = execute;\n")).toEqual([expect.stringContaining('src/store/ never imports')]);
  });

  it('keeps HTTP out of the service, so the CLI and MCP can run it', async () => {
    expect(await restricted('src/service/new-feature.ts', "import { sendDoc } from '../http/request-context.js';\nexport const s = sendDoc;\n")).toEqual([expect.stringContaining('never imports HTTP')]);
    expect(await restricted('src/service/new-feature.ts', "import { WriteQueue } from '../queue/write-queue.js';\nexport const q = WriteQueue;\n")).toEqual([expect.stringContaining('src/service/ never imports queue')]);
    expect(await restricted('src/service/runtime.ts', "import { WriteQueue } from '../queue/write-queue.js';\nexport const q = WriteQueue;\n")).toEqual([]);
  });

  it('lets routes see services only: no store values, and nothing of the repository, not even a type', async () => {
    expect(await restricted('src/http/routes/new-route.ts', "import { StoreError } from '../../store/store.js';\nexport const s = StoreError;\n")).toEqual([expect.stringContaining('Routes see services only')]);
    expect(await restricted('src/http/routes/new-route.ts', "import type { Store } from '../../store/store.js';\nexport type S = Store;\n")).toEqual([]);
    expect(await restricted('src/http/new-part.ts', "import { toStored } from '../service/repository/repository.js';\nexport const t = toStored;\n")).toEqual([expect.stringContaining('never the repository')]);
    expect(await restricted('src/http/new-part.ts', "import type { CheckpointDoc } from '../service/repository/repository.js';\nexport type D = CheckpointDoc;\n")).toEqual([expect.stringContaining('never the repository')]);
    expect(await restricted('src/queue/new-part.ts', "import type { TaskHead } from '../service/repository/repository.js';\nexport type H = TaskHead;\n")).toEqual([expect.stringContaining('never the repository')]);
  });

  it('finds no route or queue file that names the repository', async () => {
    const results = await eslint.lintFiles(['src/http/**/*.ts', 'src/queue/**/*.ts']);
    const found = results.flatMap((result) => result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => `${result.filePath}: ${m.message}`));
    expect(found).toEqual([]);
  });

  it('keeps the CLI off HTTP internals, and the client to types of the server', async () => {
    expect(await restricted('src/cli/new-command.ts', "import { buildApp } from '../app.js';\nexport const b = buildApp;\n")).toEqual([expect.stringContaining('never src/http/')]);
    expect(await restricted('src/client/new-part.ts', "import { ERRORS } from '../errors.js';\nimport { checkpointSchema } from '../domain/checkpoint.js';\nexport const e = [ERRORS, checkpointSchema];\n")).toEqual([expect.stringContaining('only types of the server')]);
  });

  it('lets only the transaction runner run a transaction', async () => {
    const source = "import type { Store } from '../store/store.js';\nexport const run = (store: Store) => store.transact(async () => 1);\n";
    expect(await messages('src/service/new-sweeper.ts', source, 'no-restricted-syntax')).toEqual([expect.stringContaining('runTransaction')]);
    expect(await messages('src/service/transactions.ts', source, 'no-restricted-syntax')).toEqual([]);
  });
});
