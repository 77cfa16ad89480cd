/**
 * GET /v1/events: a page of CloudEvents after a cursor, or, with
 * `Accept: text/event-stream`, a live Server-Sent Events stream that resumes
 * after `Last-Event-ID` without repeating or skipping an event.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AppError } from '../../errors.js';
import type { ServiceContext } from '../../service/context.js';
import { checkHeld, eventPage, isEventCursor, liveEvents, presentCursor } from '../../service/events.js';
import { EVENT_TYPES } from '../../domain/events.js';
import { accepts, actorOf, scoped } from '../request-context.js';
import { eventsQuery } from '../schemas.js';

const SSE = 'text/event-stream';
const HEARTBEAT_MS = 15_000;

function parseTypes(types: string | undefined): ReadonlySet<string> | undefined {
  if (types === undefined || types === '') return undefined;
  const list = types.split(',').map((t) => t.trim()).filter(Boolean);
  const unknown = list.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0) {
    throw new AppError('validation_failed', { errors: [{ field: 'query.types', message: `unknown event types: ${unknown.join(', ')}` }] });
  }
  return new Set(list);
}

export async function eventRoutes(base: FastifyInstance, { ctx, pollMs }: { ctx: ServiceContext; pollMs?: number }): Promise<void> {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.get('/v1/events', { schema: { tags: ['events'], summary: 'Events after a cursor; SSE with Accept: text/event-stream', querystring: eventsQuery } }, async (request, reply) => {
    const actor = actorOf(request);
    const types = parseTypes(request.query.types);
    const lastEventId = request.headers['last-event-id'];
    const after = typeof lastEventId === 'string' && lastEventId !== '' ? lastEventId : request.query.after;
    if (after !== undefined && !isEventCursor(after)) throw new AppError('invalid_cursor');

    if (!accepts(request, SSE)) {
      return eventPage(scoped(ctx, request), actor, { ...(after ? { after } : {}), ...(types ? { types } : {}), limit: request.query.limit });
    }

    if (after !== undefined && isEventCursor(after)) await checkHeld(ctx, actor, after);
    const start = after ?? (await presentCursor(ctx, actor));
    const abort = new AbortController();
    request.raw.on('close', () => abort.abort());
    reply.hijack();
    const out = reply.raw;
    out.writeHead(200, {
      'Content-Type': SSE,
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      'X-Request-Id': String(request.id),
    });
    // Where the stream starts, as an id-only frame: a client that loses the connection before the first
    // event still resumes from here (EventSource takes the id without dispatching an event).
    out.write(start ? `: connected\nid: ${start}\n\n` : ': connected\n\n');
    const heartbeat = setInterval(() => out.write(': keep-alive\n\n'), HEARTBEAT_MS);
    try {
      for await (const event of liveEvents(scoped(ctx, request), actor, { ...(start ? { after: start } : {}), ...(types ? { types } : {}) }, abort.signal, pollMs)) {
        const { cursor, ...cloudEvent } = event;
        out.write(`id: ${cursor}\nevent: ${event.type}\ndata: ${JSON.stringify(cloudEvent)}\n\n`);
      }
    } catch (error) {
      request.log.warn({ err: error }, 'event stream ended on an error');
    } finally {
      clearInterval(heartbeat);
      out.end();
    }
  });
}
