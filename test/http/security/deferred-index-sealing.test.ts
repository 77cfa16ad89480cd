/**
 * Turning encryption at rest on while a plain create's index entries still
 * wait for the merge (store format 7, `repository/indexes.ts`): the pending
 * entry holds its agent and labels as plain lines; `rekey` blinds them in
 * the list, and the merge writes blinded keys, so no plain value is left and
 * search finds the checkpoint before and after.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { keyspaceOf } from '../../../src/service/repository/keyspace.js';
import { useKeyedApp } from '../../support/keyed-app.js';
import { auth, checkpointBody } from '../../support/app.js';
import { mergePending } from '../../support/insert.js';

const keyed = useKeyedApp('baton-deferred-sealing-');
const { keyFile } = keyed;
it('blinds the index entries a plain create left to the merge, in the pending list on rekey and in the keys the merge writes', { timeout: 60_000 }, async () => {
  // No indexer: the create's entry waits in the pending list, with its agent and labels as plain lines.
  let app = await keyed.start({ withKeys: false, indexer: 'off' });
  const payload = checkpointBody('waiting-task', { agentId: 'plaintext-agent-77', labels: { team: 'plaintext-team-77' } });
  const created = (await app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload })).json() as { id: string };
  await keyed.stop();

  writeFileSync(keyFile, `k1:${randomBytes(32).toString('base64')}\n`);
  app = await keyed.start({ indexer: 'off' });
  const found = async (query: string) => ((await app.inject({ method: 'GET', url: `/v1/checkpoints?${query}`, headers: auth() })).json().items as { id: string }[]).map((c) => c.id);
  expect(await found('agentId=plaintext-agent-77')).toEqual([created.id]);
  expect((await app.inject({ method: 'POST', url: '/v1/admin/rekey', headers: auth('admin'), payload: {} })).statusCode).toBe(202);
  for (let state = 'running'; state === 'running'; ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    state = ((await app.inject({ method: 'GET', url: '/v1/admin/rekey', headers: auth('admin') })).json() as { state: string }).state;
  }
  const { pendingList, index } = keyspaceOf('default');
  const bytesOf = async (space: typeof index) => Buffer.concat((await keyed.store().transact((tx) => tx.getRange(space.range().begin, space.range().end), { readOnly: true })).flatMap((row) => [row.key, Buffer.from(row.value)]));
  const pending = await bytesOf(pendingList);
  expect(pending.length).toBeGreaterThan(0);
  for (const plain of ['plaintext-agent-77', 'plaintext-team-77']) expect(pending.includes(plain), plain).toBe(false);
  expect(await found('agentId=plaintext-agent-77')).toEqual([created.id]);
  expect(await found('label.team=plaintext-team-77')).toEqual([created.id]);
  await mergePending(keyed.store(), 'default');
  const merged = await bytesOf(index);
  for (const plain of ['plaintext-agent-77', 'plaintext-team-77']) expect(merged.includes(plain), plain).toBe(false);
  expect(await found('agentId=plaintext-agent-77')).toEqual([created.id]);
  expect(await found('label.team=plaintext-team-77')).toEqual([created.id]);
});
