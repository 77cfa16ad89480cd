/**
 * Recording what reads find corrupt: each damaged record once, with an audit
 * entry and a CHECKPOINT_CORRUPTED event, written by its own command. Reads
 * reach this through `ctx.integrity` and stay read-only; the answer to the
 * read does not wait on the record succeeding.
 *
 * @module
 */
import type { Actor } from '../domain/commands.js';
import type { IntegrityReporter, ServiceContext } from './context.js';
import { execute } from './execute.js';
import type { Corruption } from './repository/repository.js';

export const integrityRecorder: IntegrityReporter = {
  async report(ctx: ServiceContext, actor: Actor, found: readonly Corruption[]): Promise<void> {
    for (const corruption of found) await recordOnce(ctx, actor, corruption);
  },
};

async function recordOnce(ctx: ServiceContext, actor: Actor, corruption: Corruption): Promise<void> {
  ctx.log.error({ ...corruption, tenant: actor.tenant }, 'checkpoint failed hash verification');
  try {
    await execute(ctx, {
      kind: 'checkpoint.corrupted',
      // One operation per damaged record: however often it is read, it is recorded once.
      operationId: `corrupt:${corruption.checkpointId}:${corruption.version ?? 'current'}:${corruption.reason}`,
      idempotency: 'once',
      fingerprint: '',
      actor,
      at: ctx.now().toISOString(),
      ...corruption,
    });
  } catch (error) {
    ctx.log.warn({ err: error, checkpointId: corruption.checkpointId }, 'could not record a checkpoint corruption');
  }
}
