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

  it('keep the console to the client, the event names and types of the server', async () => {
    const hash = "import { canonicalJson } from '../../src/domain/hash.js';\nexport const c = canonicalJson;\n";
    expect(await restricted('console/src/new-view.ts', hash)).toEqual([expect.stringContaining('console/ reaches Baton through src/client/')]);
    expect(await restricted('console/src/new-view.ts', "import type { Checkpoint } from '../../src/domain/checkpoint.js';\nexport type C = Checkpoint;\n")).toEqual([]);
    expect(await restricted('console/src/new-view.ts', "import { BatonClient } from '../../src/client/client.js';\nexport const c = BatonClient;\n")).toEqual([]);
    expect(await restricted('console/src/new-view.ts', "import { EVENT_TYPES } from '../../src/domain/events.js';\nexport const e = EVENT_TYPES;\n")).toEqual([]);
  });
});
