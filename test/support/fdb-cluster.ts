/**
 * Whether a file's FoundationDB tests run here: `FDB_CLUSTER_FILE` names a
 * cluster and the client library loads. Otherwise they are skipped, and
 * with `BATON_REQUIRE_FDB=1` (`npm run test:fdb`) a failing test says why.
 */
import { it } from 'vitest';
import { loadBinding } from '../../src/store/fdb.js';

/** The cluster file when the FoundationDB tests run, else undefined (and, when required, a failing test). */
export async function fdbClusterFile(): Promise<string | undefined> {
  const clusterFile = process.env.FDB_CLUSTER_FILE;
  const clientLoads = await loadBinding().then(
    () => true,
    () => false,
  );
  if (clusterFile !== undefined && clientLoads) return clusterFile;
  if (process.env.BATON_REQUIRE_FDB === '1') {
    it('needs a reachable FoundationDB cluster', () => {
      throw new Error('BATON_REQUIRE_FDB=1, but FDB_CLUSTER_FILE is not set or the client does not load.');
    });
  }
  return undefined;
}
