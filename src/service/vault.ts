/**
 * Encryption at rest, as the service runs it: the key file's keyring, each
 * tenant's {@link Sealing} (its newest key seals, every key opens, its
 * blind-index key loaded once), the record of which keys the store uses, and
 * the check at start-up that the key file still has every one of them.
 * `docs/encryption.md` tells the whole scheme.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { BlindTable } from '../crypto/blind-table.js';
import { Blinder, Keyring } from '../crypto/keyring.js';
import { ConfigError } from '../config.js';
import type { ServiceContext, VaultPort } from './context.js';
import { forgetKey, listInstances, noteKeys, Repository, usedKeys, type Sealing } from './repository/repository.js';
import { keysNeeded, selfOf } from './fleet/instance.js';
import { Rekeyer, type RekeyStatus } from './rekey.js';
import type { Transaction } from '../store/store.js';
import { runTransaction } from './transactions.js';
import { AppError } from '../errors.js';

/** What every queued record is bound to: the journal holds records of one kind. */
const JOURNAL_AAD = Buffer.from('baton-queue-record', 'utf8');

export class Vault implements VaultPort {
  private readonly ready = new Map<string, Sealing | undefined>();
  private readonly loading = new Map<string, Promise<Sealing | undefined>>();

  constructor(readonly keyring: Keyring) {}

  /** The key file at `path`, as a vault; a file that cannot be used throws a {@link ConfigError} saying why. */
  static fromFile(path: string): Vault {
    try {
      return new Vault(Keyring.fromFile(path));
    } catch (error) {
      throw new ConfigError((error as Error).message);
    }
  }

  /** `tenant`'s sealing, its blind-index key read (or made) by the first call. */
  sealing(ctx: ServiceContext, tenant: string): Promise<Sealing | undefined> | Sealing | undefined {
    if (this.ready.has(tenant)) return this.ready.get(tenant);
    let loading = this.loading.get(tenant);
    if (loading === undefined) {
      loading = this.load(ctx, tenant).finally(() => this.loading.delete(tenant));
      this.loading.set(tenant, loading);
    }
    return loading;
  }

  private async load(ctx: ServiceContext, tenant: string): Promise<Sealing | undefined> {
    const entry = this.keyring.sealingKey(tenant);
    if (entry === undefined) {
      this.ready.set(tenant, undefined);
      return undefined;
    }
    const keyring = this.keyring;
    const base = {
      seal: (plain: Uint8Array, aad: Uint8Array) => keyring.seal(entry, plain, aad),
      open: (bytes: Uint8Array, aad: Uint8Array) => keyring.open(bytes, aad),
    };
    // The index key is a sealed value itself: read with a sealing that has no blind index yet.
    const indexKey = await runTransaction(ctx, (tx) =>
      new Repository(tx, tenant, {
        ...base,
        blind: () => {
          throw new Error('The blind-index key is not loaded yet.');
        },
      }).header.indexKey(),
    );
    const blinder = new Blinder(indexKey);
    const blind = (value: string): string => blinder.blind(value);
    const sealing: Sealing = { ...base, blind, words: new BlindTable(blind) };
    this.ready.set(tenant, sealing);
    return sealing;
  }

  /** A queued record's bytes, sealed with its tenant's key (plain when the tenant has none). */
  sealRecord(tenant: string, payload: Buffer): Buffer {
    const entry = this.keyring.sealingKey(tenant);
    return entry === undefined ? payload : this.keyring.seal(entry, payload, JOURNAL_AAD);
  }

  openRecord(payload: Buffer): Buffer {
    return this.keyring.open(payload, JOURNAL_AAD);
  }
}

/**
 * Checks that every key the store has used is in the key file, and then
 * records the keys this process will seal with, before it seals anything: a
 * missing key would leave values that never open, so start-up stops there,
 * naming it, and the refusal throws inside the transaction so that it
 * records nothing (a later start with the right file is not refused over
 * the wrong file's keys).
 */
export async function checkKeys(ctx: ServiceContext, source: string | undefined): Promise<void> {
  const keyring = ctx.vault?.keyring;
  // Without a key file there is nothing to note: the check only reads.
  await runTransaction(
    ctx,
    async (tx) => {
      const missing = (await usedKeys(tx)).find((id) => keyring?.has(id) !== true);
      if (missing !== undefined) throw missingKey('The store holds values', missing, source);
      if (keyring !== undefined) noteKeys(tx, keyring.sealingKeys().map((entry) => entry.id));
    },
    { readOnly: keyring === undefined },
  );
}

/** The one sentence a start refuses with when `holder` needs key `keyId` and the key file (`source`, if any) lacks it. */
export function missingKey(holder: string, keyId: string, source: string | undefined): ConfigError {
  return new ConfigError(
    source === undefined
      ? `${holder} sealed with encryption key "${keyId}"; set BATON_ENCRYPTION_KEY_FILE to a key file that has it.`
      : `${holder} sealed with encryption key "${keyId}", which ${source} does not have; add its line back.`,
  );
}

/**
 * Forgets, inside `tx`, keys no value is sealed with any more (after a
 * re-seal); the key file may then drop their lines. A key another instance
 * still seals with, or that a journal with writes left needs, is kept
 * (`fleet/instance.ts`); the instances are read in the same transaction, so
 * one announcing itself meanwhile makes the retirement look again.
 */
export async function retireKeys(tx: Transaction, ctx: ServiceContext, keep: ReadonlySet<string>): Promise<string[]> {
  const needed = keysNeeded(await listInstances(tx), ctx.now(), selfOf(ctx));
  const retired = (await usedKeys(tx)).filter((id) => !keep.has(id) && !needed.has(id));
  for (const id of retired) forgetKey(tx, id);
  return retired;
}

/** Each vault's side of the fleet's re-seal pass: the pass it runs, if any, and its reading of the store's record. */
const rekeyers = new WeakMap<VaultPort, Rekeyer>();

function rekeyerOf(ctx: ServiceContext): Rekeyer {
  if (ctx.vault === undefined) throw new AppError('encryption_not_configured');
  let rekeyer = rekeyers.get(ctx.vault);
  if (rekeyer === undefined) rekeyers.set(ctx.vault, (rekeyer = new Rekeyer(ctx.instanceId ?? randomUUID())));
  return rekeyer;
}

/** Starts a re-seal pass unless one runs on any instance, and answers the one running; 409 without encryption at rest. */
export function startRekey(ctx: ServiceContext): Promise<RekeyStatus> {
  return rekeyerOf(ctx).start(ctx, (tx, keep) => retireKeys(tx, ctx, keep));
}

/** The fleet's re-seal pass as the store holds it: the same answer on every instance. */
export function rekeyStatus(ctx: ServiceContext): Promise<RekeyStatus> {
  return rekeyerOf(ctx).status(ctx);
}

/** Ends the pass in progress (if any) after its current batch: the runtime is closing. */
export function stopRekey(ctx: ServiceContext): Promise<void> {
  return ctx.vault === undefined ? Promise.resolve() : (rekeyers.get(ctx.vault)?.stop() ?? Promise.resolve());
}
