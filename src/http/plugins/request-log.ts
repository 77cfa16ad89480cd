/**
 * Fastify's own lines for each request ("incoming request" as it is routed,
 * "request completed" with the status and the time taken) at `debug`, not
 * at `info`: at the default level a read then logs nothing and a write one
 * line, the service's ("checkpoint created", "checkpoint changed", with the
 * request, task, checkpoint and trace ids). The two JSON lines cost a read
 * about 15 µs of its ~55 µs on the event loop, and at thousands of reads a
 * second they were most of what the service logged (`docs/performance.md`,
 * issue 44). `LOG_LEVEL=debug` gives them back, as Fastify writes them. A
 * request that fails is still logged as Fastify logs it ("request errored",
 * at `error`), and Baton's error handler logs every refusal and failure
 * itself (`errors.ts`).
 *
 * @module
 */
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

export class RequestLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error) reply.log.error({ res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
