/**
 * `client.leases`: acquire, renew and release a task's lease. The epoch of
 * a lease this client acquires is sent as `Baton-Lease-Epoch` on its writes
 * to the task until it releases the lease.
 *
 * @module
 */
import type { ClientCore } from './core.js';
import { segment, type CallOptions } from './transport.js';
import type { LeaseRequest, LeaseView } from './types.js';

export class Leases {
  constructor(private readonly core: ClientCore) {}

  /** `POST /v1/tasks/:taskId/lease`: 409 `lease_held` while another agent holds a live one. */
  async acquire(taskId: string, request: LeaseRequest, options?: CallOptions): Promise<LeaseView> {
    const lease = await this.core.transport.json<LeaseView>({ method: 'POST', path: `/v1/tasks/${segment(taskId)}/lease`, body: request, options });
    this.core.book.hold(lease);
    return lease;
  }

  /** `POST /v1/leases/:id/renew`: its own TTL again, or `ttlMs`. */
  async renew(leaseId: string, ttlMs?: number, options?: CallOptions): Promise<LeaseView> {
    const lease = await this.core.transport.json<LeaseView>({ method: 'POST', path: `/v1/leases/${segment(leaseId)}/renew`, body: ttlMs === undefined ? {} : { ttlMs }, options });
    this.core.book.hold(lease);
    return lease;
  }

  /** `POST /v1/leases/:id/release`: this client stops sending the lease's epoch. */
  async release(leaseId: string, options?: CallOptions): Promise<LeaseView> {
    const lease = await this.core.transport.json<LeaseView>({ method: 'POST', path: `/v1/leases/${segment(leaseId)}/release`, options });
    this.core.book.release(lease);
    return lease;
  }
}
