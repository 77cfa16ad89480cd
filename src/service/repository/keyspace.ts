/**
 * Each tenant's keyspace, built once: keys are packed on every request, and a
 * tenant's subspaces never change (but for the layout of the store the
 * process serves, settled when it opens: `src/service/repository/key-layout.ts`).
 *
 * @module
 */
import { keyLayout, tenantKeyspace, type KeyLayout } from '../../store/keyspace.js';

export type Keyspace = ReturnType<typeof tenantKeyspace>;

const keyspaces: Record<KeyLayout | 'unknown', Map<string, Keyspace>> = { task: new Map(), spaces: new Map(), unknown: new Map() };

export function keyspaceOf(tenant: string): Keyspace {
  const layout = keyLayout();
  let ks = keyspaces[layout].get(tenant);
  if (ks === undefined) {
    ks = tenantKeyspace(tenant, layout);
    keyspaces[layout].set(tenant, ks);
  }
  return ks;
}
