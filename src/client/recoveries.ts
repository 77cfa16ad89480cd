/**
 * `client.recoveries`: a task's recovery point, starting a recovery (which
 * fences the failed agent at once), completing it (the recovering agent gets
 * the lease, remembered by this client), and an admin's unblock.
 *
 * @module
 */
import type { ClientCore } from './core.js';
import { segment, type CallOptions } from './transport.js';
import type { Recovery, RecoveryCompleted, RecoveryPoint, RecoveryRequest, RecoveryStarted, SuccessorRequest, TaskInfo } from './types.js';

export class Recoveries {
  constructor(private readonly core: ClientCore) {}

  /** `GET /v1/tasks/:taskId/recovery-point`: the newest checkpoint that verifies. */
  async point(taskId: string, options?: CallOptions): Promise<RecoveryPoint> {
    const point = await this.core.transport.json<RecoveryPoint>({ method: 'GET', path: `/v1/tasks/${segment(taskId)}/recovery-point`, options });
    this.core.book.saw(point.checkpoint);
    return point;
  }

  /** `POST /v1/tasks/:taskId/recoveries`: `initiated`, or `blocked` by the circuit breaker. */
  async start(taskId: string, request: RecoveryRequest, options?: CallOptions): Promise<RecoveryStarted> {
    const started = await this.core.transport.json<RecoveryStarted>({ method: 'POST', path: `/v1/tasks/${segment(taskId)}/recoveries`, body: request, options });
    this.core.book.saw(started.checkpoint);
    return started;
  }

  /** `GET /v1/recoveries/:id`. */
  get(recoveryId: string, options?: CallOptions): Promise<Recovery> {
    return this.core.transport.json<Recovery>({ method: 'GET', path: `/v1/recoveries/${segment(recoveryId)}`, options });
  }

  /** `POST /v1/recoveries/:id/complete`: the recovering agent takes the task with a new lease. */
  async complete(recoveryId: string, request: SuccessorRequest, options?: CallOptions): Promise<RecoveryCompleted> {
    const completed = await this.core.transport.json<RecoveryCompleted>({ method: 'POST', path: `/v1/recoveries/${segment(recoveryId)}/complete`, body: request, options });
    this.core.book.hold(completed.lease);
    return completed;
  }

  /** `POST /v1/tasks/:taskId/unblock` (admin token): the breaker closes and the task may be recovered again. */
  unblock(taskId: string, reason?: string, options?: CallOptions): Promise<TaskInfo> {
    return this.core.transport.json<TaskInfo>({ method: 'POST', path: `/v1/tasks/${segment(taskId)}/unblock`, body: reason === undefined ? {} : { reason }, options });
  }
}
