/**
 * `client.handoffs`: an agent hands its task off from a checkpoint; a fresh
 * agent acknowledges and gets the child checkpoint and the task's lease,
 * whose epoch this client then carries on its writes to the task.
 *
 * @module
 */
import type { ClientCore } from './core.js';
import { segment, type CallOptions } from './transport.js';
import type { Handoff, HandoffAcknowledged, HandoffRequest, HandoffStarted, SuccessorRequest } from './types.js';

export class Handoffs {
  constructor(private readonly core: ClientCore) {}

  /**
   * `POST /v1/checkpoints/:id/handoff`: writes the final checkpoint (phase
   * `handoff`) and announces AGENT_HANDOFF. This agent's lease ends; its
   * epoch is kept, so its later writes are refused once a successor holds
   * the task.
   */
  async start(checkpointId: string, request: HandoffRequest, options?: CallOptions): Promise<HandoffStarted> {
    const headers = await this.core.fenceCheckpoint(checkpointId, options);
    const started = await this.core.transport.json<HandoffStarted>({ method: 'POST', path: `/v1/checkpoints/${segment(checkpointId)}/handoff`, body: request, headers, options });
    this.core.book.saw(started.checkpoint);
    return started;
  }

  /** `GET /v1/handoffs/:id`: pending, then acknowledged. */
  get(handoffId: string, options?: CallOptions): Promise<Handoff> {
    return this.core.transport.json<Handoff>({ method: 'GET', path: `/v1/handoffs/${segment(handoffId)}`, options });
  }

  /** `POST /v1/handoffs/:id/ack`: the child checkpoint to resume from, and the lease (remembered). */
  async ack(handoffId: string, request: SuccessorRequest, options?: CallOptions): Promise<HandoffAcknowledged> {
    const acknowledged = await this.core.transport.json<HandoffAcknowledged>({ method: 'POST', path: `/v1/handoffs/${segment(handoffId)}/ack`, body: request, options });
    this.core.book.saw(acknowledged.checkpoint);
    this.core.book.hold(acknowledged.lease);
    return acknowledged;
  }
}
