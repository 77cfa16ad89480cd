/**
 * Waits for a FoundationDB cluster to have caught up with the writes of the
 * scenario before: its storage and log servers' queues below a bound, read
 * from the cluster's status (`\xff\xff/status/json`, the document `fdbcli
 * status json` prints). The cluster of this machine (one `fdbserver` built
 * at -O0 on the load's two cores) answers the floor route's ~4,300 creates a
 * second faster than its storage server makes them durable: its queue grows
 * to ~200 MB, the ratekeeper then lets ~600-1,300 transactions a second
 * through until it drains, and a scenario started meanwhile measures that.
 * bench:fleet starts each scenario on a cluster that has caught up, and says
 * how long that took.
 *
 * @module
 */
import { loadBinding } from '../../src/store/fdb.js';

const STATUS_KEY = Buffer.from('\xff\xff/status/json', 'latin1');

export interface Quiet {
  waitedMs: number;
  storageQueueBytes: number;
  logQueueBytes: number;
}

/** Resolves once both queues are under `maxQueueBytes`, or after `timeoutMs` with the last figures. */
export async function clusterQuiet(clusterFile: string, maxQueueBytes = 48 * 2 ** 20, timeoutMs = 120_000): Promise<Quiet> {
  const fdb = await loadBinding();
  const db = fdb.open(clusterFile);
  const started = Date.now();
  for (;;) {
    const status = await db.doTn(async (tn) => tn.get(STATUS_KEY));
    const qos = (JSON.parse(status?.toString('utf8') ?? '{}') as { cluster?: { qos?: { worst_queue_bytes_storage_server?: number; worst_queue_bytes_log_server?: number } } }).cluster?.qos ?? {};
    const storageQueueBytes = qos.worst_queue_bytes_storage_server ?? 0;
    const logQueueBytes = qos.worst_queue_bytes_log_server ?? 0;
    const waitedMs = Date.now() - started;
    if ((storageQueueBytes < maxQueueBytes && logQueueBytes < maxQueueBytes) || waitedMs >= timeoutMs) return { waitedMs, storageQueueBytes, logQueueBytes };
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
