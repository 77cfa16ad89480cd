/**
 * The closed-loop PATCH scenario of the HTTP benchmark: merge patches with
 * If-Match over a pool of checkpoints, arranged so that every If-Match is
 * current and a 412 can only mean that the server lost or misreported a
 * version.
 *
 * @module
 */
import { PREP_CONCURRENCY } from './http-config.js';
import { call, concurrently, versionOf } from './http-client.js';
import { patchBody } from './http-payloads.js';
import type { Requests } from './http-scenarios.js';

/** How long the server is given to finish what a closed run left in flight before versions are read again. */
const RESYNC_QUIET_MS = 250;

export interface Slot {
  id: string;
  version: number;
}

/**
 * PATCH with If-Match. A pool of checkpoints (more than connections): each
 * request takes one in setupRequest and hands it back in onResponse with the
 * version of the answer's ETag, so no two requests in flight touch the same
 * checkpoint and every If-Match is the latest ETag: a 412 means the server
 * lost or misreported a version. Slots whose version is unknown (another
 * status, a 412 without currentVersion) are re-read before they return.
 */
export class PatchScenario {
  private pool: Slot[] = [];
  counts = { ok200: 0, conflict412: 0, other: 0, resyncs: 0, poolEmpty: 0 };
  private n = 0;
  /** Bumped by resync: hand-backs from an earlier run are ignored. */
  private generation = 0;

  constructor(
    private readonly base: string,
    private readonly slots: Slot[],
  ) {}

  /**
   * Re-reads every slot's version (a run's last answers are lost when
   * autocannon closes its connections), until two reads a quiet interval
   * apart agree. Closing a connection does not recall a PATCH already sent:
   * the server still applies it after the run ends, and a version read
   * before that lands is one behind, so the next run's first PATCH of that
   * slot would be a 412 that says nothing about the server. (This was the
   * 100 x 412 of an earlier run at 100 connections: one per connection.)
   */
  async resync(): Promise<void> {
    this.generation++;
    this.pool = [];
    for (let changed = true; changed; ) {
      changed = false;
      await new Promise((resolve) => setTimeout(resolve, RESYNC_QUIET_MS));
      await concurrently(this.slots.length, PREP_CONCURRENCY, async (i) => {
        const slot = this.slots[i]!;
        const response = await call(`${this.base}/v1/checkpoints/${slot.id}`);
        const version = versionOf(response.etag) ?? slot.version;
        if (version !== slot.version) changed = true;
        slot.version = version;
      });
    }
    this.pool = this.slots.slice();
    this.counts = { ok200: 0, conflict412: 0, other: 0, resyncs: 0, poolEmpty: 0 };
  }

  requests(): Requests {
    return [
      {
        method: 'PATCH',
        path: '/v1/checkpoints/00000000-0000-7000-8000-000000000000',
        setupRequest: (request, context) => {
          let slot = this.pool.pop();
          if (slot === undefined) {
            // Should not happen (the pool has spares); share a slot rather than stop.
            this.counts.poolEmpty++;
            slot = this.slots[this.n % this.slots.length]!;
          }
          (context as { slot?: Slot }).slot = slot;
          request.path = `/v1/checkpoints/${slot.id}`;
          request.headers = { ...request.headers, 'content-type': 'application/merge-patch+json', 'if-match': `"${slot.version}"` };
          request.body = patchBody(this.n++);
          return request;
        },
        onResponse: (status, body, context, headers) => {
          const slot = (context as { slot?: Slot }).slot;
          if (slot === undefined) return;
          (context as { slot?: Slot }).slot = undefined;
          const etag = headers ? Object.entries(headers).find(([key]) => key.toLowerCase() === 'etag')?.[1] : undefined;
          if (status === 200) {
            this.counts.ok200++;
            slot.version = versionOf(String(etag)) ?? slot.version + 1;
            this.pool.push(slot);
            return;
          }
          if (status === 412) this.counts.conflict412++;
          else this.counts.other++;
          let current: number | undefined;
          try {
            const problem = JSON.parse(body) as { currentVersion?: unknown };
            if (typeof problem.currentVersion === 'number') current = problem.currentVersion;
          } catch {
            // Not JSON.
          }
          if (current !== undefined) {
            slot.version = current;
            this.pool.push(slot);
            return;
          }
          this.counts.resyncs++;
          const generation = this.generation;
          void call(`${this.base}/v1/checkpoints/${slot.id}`)
            .then((response) => {
              slot.version = versionOf(response.etag) ?? slot.version;
            })
            .catch(() => undefined)
            .finally(() => {
              if (generation === this.generation) this.pool.push(slot);
            });
        },
      },
    ];
  }
}
