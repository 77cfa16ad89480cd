/**
 * This instance's entry among the instances over the store
 * (`repository/instances.ts`): the keys it seals with, the keys its queued
 * writes need, and when it was last seen. A re-seal pass on any instance
 * retires only keys no entry names (`keysInUse`), so a rolling key rotation
 * cannot retire the key another instance still seals with, nor the key a
 * stopped instance's journal still needs to open its writes.
 *
 * The instance's id is kept in its queue directory (one directory, one
 * process): an instance that restarts on its journal is the same instance,
 * and its entry follows its journal. Without a queue the id is the
 * process's own.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServiceContext } from '../context.js';
import { periodic, type Periodic } from '../maintenance/periodic.js';
import { listInstances, noteSigningKey, putInstance, removeInstance, type InstanceEntry } from '../repository/repository.js';
import { runTransaction } from '../transactions.js';

/** How often a running instance refreshes its entry. */
export const INSTANCE_REFRESH_MS = 10_000;
/** An entry not refreshed for this long is a stopped instance's: only its journal's keys still count. */
export const INSTANCE_TTL_MS = 6 * INSTANCE_REFRESH_MS;

/** The instance id kept in `queueDir` (made there once), or a new one when there is no queue. */
export function instanceId(queueDir: string | undefined): string {
  if (queueDir === undefined) return randomUUID();
  const path = join(queueDir, 'instance-id');
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    mkdirSync(queueDir, { recursive: true });
    const id = randomUUID();
    writeFileSync(path, `${id}\n`);
    return id;
  }
}

/**
 * This instance's entry: its sealing keys, and, while it has a queue, every
 * key of its file as its journal's. The queue fills while the store is
 * unreachable, when the entry cannot be written, and an instance may die
 * then: so the entry names the journal's keys beforehand, and only a clean
 * stop with an empty queue withdraws them.
 */
function entryOf(ctx: ServiceContext, id: string): InstanceEntry {
  const keyring = ctx.vault?.keyring;
  return {
    id,
    sealingKeys: keyring?.sealingKeys().map((entry) => entry.id) ?? [],
    // A queued write is sealed with the key that sealed when it was accepted: any key of the file may be one.
    journalKeys: keyring !== undefined && ctx.queue !== undefined ? keyring.ids : [],
    seenAt: ctx.now().toISOString(),
  };
}

/** Writes this instance's entry, and notes its signing key (its evidence bundles are signed with it) for every instance's `GET /v1/keys`. */
export function announceInstance(ctx: ServiceContext, id: string): Promise<void> {
  const entry = entryOf(ctx, id);
  const { signer } = ctx;
  return runTransaction(ctx, async (tx) => {
    putInstance(tx, entry);
    if (signer !== undefined) noteSigningKey(tx, signer.publicKey);
  });
}

/** Refreshes the entry every {@link INSTANCE_REFRESH_MS}; a refresh the store refuses is tried at the next. */
export function startInstanceRefresh(ctx: ServiceContext, id: string, intervalMs = INSTANCE_REFRESH_MS): Periodic {
  return periodic('instance refresh', intervalMs, ctx.log, () => announceInstance(ctx, id));
}

/** On a clean stop: the entry goes with an empty queue, and stays (naming the journal's keys) with writes left in it. */
export async function leaveFleet(ctx: ServiceContext, id: string): Promise<void> {
  const entry = entryOf(ctx, id);
  const empty = (ctx.queue?.depth ?? 0) === 0;
  await runTransaction(ctx, async (tx) => (empty ? removeInstance(tx, id) : putInstance(tx, { ...entry, sealingKeys: [] })));
}

/**
 * The keys some instance still needs: what each instance seen within
 * {@link INSTANCE_TTL_MS} seals with, and what every journal with writes
 * left needs, whenever its instance was last seen.
 */
export async function keysInUse(ctx: ServiceContext): Promise<Set<string>> {
  return keysNeeded(await runTransaction(ctx, (tx) => listInstances(tx), { readOnly: true }), ctx.now(), selfOf(ctx));
}

/** The asking instance as it is now, for {@link keysNeeded}. */
export function selfOf(ctx: ServiceContext): { id: string; journalKeys: readonly string[] } | undefined {
  if (ctx.instanceId === undefined) return undefined;
  return { id: ctx.instanceId, journalKeys: (ctx.queue?.depth ?? 0) > 0 ? (ctx.vault?.keyring.ids ?? []) : [] };
}

/**
 * {@link keysInUse} of `entries` read at `now` (inside a caller's own
 * transaction); `self`, the asking instance, counts as it is now rather than
 * as its entry says: its journal's keys only while writes wait in it.
 */
export function keysNeeded(entries: readonly InstanceEntry[], now: Date, self?: { id: string; journalKeys: readonly string[] }): Set<string> {
  const seenSince = new Date(now.getTime() - INSTANCE_TTL_MS).toISOString();
  const keys = new Set<string>(self?.journalKeys);
  for (const entry of entries) {
    if (entry.id === self?.id) continue;
    for (const key of entry.journalKeys) keys.add(key);
    if (entry.seenAt >= seenSince) for (const key of entry.sealingKeys) keys.add(key);
  }
  return keys;
}
