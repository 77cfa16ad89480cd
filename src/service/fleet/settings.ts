/**
 * The settings that remove data, as the fleet shares them (DESIGN §10): held
 * in the store (`repository/fleet-settings.ts`), read by every decision
 * that deletes inside that decision's own transaction, so two instances
 * never disagree on what to delete. An instance's configuration
 * (`BATON_DEFAULT_*`, `BATON_EVENT_RETENTION_MS`,
 * `BATON_OPERATION_RETENTION_MS`) seeds a store that holds none; a store
 * that holds them keeps them, the start logging each configured value it
 * overrides, and `PUT /v1/admin/settings` changes them for every instance.
 *
 * @module
 */
import type { Config } from '../../config.js';
import { changeSettings, type FleetSettings, type FleetSettingsChange } from '../../domain/fleet-settings.js';
import type { TaskPolicy } from '../../domain/retention.js';
import type { ServiceContext } from '../context.js';
import { readFleetSettings, writeFleetSettings, type Repository } from '../repository/repository.js';
import { runTransaction } from '../transactions.js';

/** The settings a configuration gives. */
export function settingsOf(config: Pick<Config, 'defaultRetention' | 'defaultExpireAfter' | 'defaultKeepLast' | 'eventRetentionMs' | 'operationRetentionMs'>): FleetSettings {
  return {
    defaults: {
      ...(config.defaultRetention !== undefined ? { retention: config.defaultRetention } : {}),
      ...(config.defaultExpireAfter !== undefined ? { expireAfter: config.defaultExpireAfter } : {}),
      ...(config.defaultKeepLast !== undefined ? { keepLast: config.defaultKeepLast } : {}),
    },
    eventRetentionMs: config.eventRetentionMs,
    operationRetentionMs: config.operationRetentionMs,
  };
}

/** The tenant defaults in force in `repo`'s transaction. */
export async function policyDefaults(ctx: ServiceContext, repo: Repository): Promise<TaskPolicy> {
  return ((await repo.fleetSettings()) ?? ctx.settingsSeed).defaults;
}

/** The settings in force now, in a read of their own. */
export async function currentSettings(ctx: ServiceContext): Promise<FleetSettings> {
  return (await runTransaction(ctx, (tx) => readFleetSettings(tx), { readOnly: true })) ?? ctx.settingsSeed;
}

/**
 * At start: writes this instance's settings to a store that holds none, and
 * answers the settings in force; each configured value the store's
 * override is named in `overridden`.
 */
export async function adoptSettings(ctx: ServiceContext): Promise<{ settings: FleetSettings; overridden: string[] }> {
  const seed = ctx.settingsSeed;
  const settings = await runTransaction(ctx, async (tx) => {
    const stored = await readFleetSettings(tx);
    if (stored !== undefined) return stored;
    writeFleetSettings(tx, seed);
    return seed;
  });
  const overridden: string[] = (['eventRetentionMs', 'operationRetentionMs'] as const).filter((name) => settings[name] !== seed[name]);
  for (const name of ['retention', 'expireAfter', 'keepLast'] as const) if (settings.defaults[name] !== seed.defaults[name]) overridden.push(name);
  return { settings, overridden };
}

/** `PUT /v1/admin/settings`: the change applied to the settings in force, for every instance. */
export function changeFleetSettings(ctx: ServiceContext, change: FleetSettingsChange): Promise<FleetSettings> {
  return runTransaction(ctx, async (tx) => {
    const next = changeSettings((await readFleetSettings(tx)) ?? ctx.settingsSeed, change);
    writeFleetSettings(tx, next);
    return next;
  });
}
