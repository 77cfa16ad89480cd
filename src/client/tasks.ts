/**
 * `client.tasks`: a task's state (in the A2A / MCP Tasks vocabulary, with its
 * lease holder and epoch), setting it, purging it, and its audit trail and
 * verification.
 *
 * @module
 */
import type { ClientCore } from './core.js';
import { segment, type CallOptions } from './transport.js';
import type { AuditEntry, ChainCheck, Page, PageQuery, TaskInfo, TaskStateRequest } from './types.js';

export class Tasks {
  constructor(private readonly core: ClientCore) {}

  /** `GET /v1/tasks/:taskId`. */
  get(taskId: string, options?: CallOptions): Promise<TaskInfo> {
    return this.core.transport.json<TaskInfo>({ method: 'GET', path: `/v1/tasks/${segment(taskId)}`, options });
  }

  /** `PUT /v1/tasks/:taskId/state`: working, input-required, auth-required, completed, failed or canceled. */
  setState(taskId: string, request: TaskStateRequest, options?: CallOptions): Promise<TaskInfo> {
    return this.core.transport.json<TaskInfo>({ method: 'PUT', path: `/v1/tasks/${segment(taskId)}/state`, body: request, options });
  }

  /**
   * `DELETE /v1/tasks/:taskId`: removes every checkpoint of the task (admin,
   * or writer where the deployment allows it); 409 `retention_active` under a
   * retention period or legal hold. The audit chain stays, with a tombstone.
   */
  async purge(taskId: string, options?: CallOptions): Promise<void> {
    await this.core.transport.send({ method: 'DELETE', path: `/v1/tasks/${segment(taskId)}`, options });
  }

  /** `GET /v1/tasks/:taskId/audit`: one page of hash-chained entries, oldest first. */
  audit(taskId: string, query: PageQuery = {}, options?: CallOptions): Promise<Page<AuditEntry>> {
    return this.core.transport.json<Page<AuditEntry>>({ method: 'GET', path: `/v1/tasks/${segment(taskId)}/audit`, query: { ...query }, options });
  }

  /** `GET /v1/tasks/:taskId/audit/verify`: `ok`, the entries checked, and the first broken one. */
  verifyAudit(taskId: string, options?: CallOptions): Promise<ChainCheck> {
    return this.core.transport.json<ChainCheck>({ method: 'GET', path: `/v1/tasks/${segment(taskId)}/audit/verify`, options });
  }
}
