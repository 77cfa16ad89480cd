/**
 * Each tenant's keyspace, built once: keys are packed on every request, and a
 * tenant's subspaces never change.
 *
 * @module
 */
import { tenantKeyspace } from '../../store/keyspace.js';

export type Keyspace = ReturnType<typeof tenantKeyspace>;

const keyspaces = new Map<string, Keyspace>();

export function keyspaceOf(tenant: string): Keyspace {
  let ks = keyspaces.get(tenant);
  if (ks === undefined) {
    ks = tenantKeyspace(tenant);
    keyspaces.set(tenant, ks);
  }
  return ks;
}
