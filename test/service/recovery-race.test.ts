/**
 * A recovery walks to its recovery point in read transactions before its
 * own transaction. A checkpoint written in between (here, by a wrapper
 * around the real LMDB store that lets it in just before the recovery's
 * transaction) is not missed: the recovery sees the task changed, walks
 * again, and starts from the newest checkpoint that verifies.
 */
import { afterEach, expect, it } from 'vitest';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import type { CreateCheckpoint, StartRecovery } from '../../src/domain/commands.js';
import { execute } from '../../src/service/execute.js';
import { standaloneContext } from '../../src/service/standalone.js';
import type { Store, TransactionBody, TransactOptions } from '../../src/store/store.js';
import { checkpointBody } from '../support/app.js';
import { serviceHarness, type ServiceHarness } from './service-context.js';

/** Runs `before` once, just ahead of the next write transaction. */
class Interposing implements Store {
  private armed: (() => Promise<void>) | undefined;
  constructor(private readonly inner: Store) {}
  get name(): Store['name'] {
    return this.inner.name;
  }
  get commitOutcomeKnown(): boolean {
    return this.inner.commitOutcomeKnown;
  }
  beforeNextWrite(before: () => Promise<void>): void {
    this.armed = before;
  }
  async transact<T>(body: TransactionBody<T>, options?: TransactOptions): Promise<T> {
    const before = options?.readOnly ? undefined : this.armed;
    if (before) {
      this.armed = undefined;
      await before();
    }
    return this.inner.transact(body, options);
  }
  ping(): Promise<void> {
    return this.inner.ping();
  }
  compact(): Promise<boolean> {
    return this.inner.compact();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

let harness: ServiceHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const actor = { tenant: 'default', role: 'writer', subject: 'writer' } as const;
const at = () => new Date().toISOString();

function create(taskId: string, n: number): CreateCheckpoint {
  return { kind: 'checkpoint.create', operationId: `op:create-${n}`, fingerprint: '', actor, at: at(), taskId, checkpointId: `01900000-0000-7000-8000-00000000000${n}`, input: checkpointInput.parse(checkpointBody(taskId)) };
}

it('walks again when a checkpoint lands between its walk and its transaction, and starts from that one', async () => {
  harness = await serviceHarness();
  const direct = harness.ctx;
  const store = new Interposing(harness.store);
  const ctx = standaloneContext(store);
  await execute(direct, create('race', 1));

  store.beforeNextWrite(async () => {
    await execute(direct, create('race', 2));
  });
  const command: StartRecovery = { kind: 'recovery.start', operationId: 'op:recovery', fingerprint: '', actor, at: at(), taskId: 'race', recoveryId: '01900000-0000-7000-8000-0000000000f1', reason: 'crash', failure: { kind: 'crash' } };
  const started = await execute(ctx, command);
  expect(started.recovery).toMatchObject({ status: 'initiated', checkpointId: '01900000-0000-7000-8000-000000000002' });
});
