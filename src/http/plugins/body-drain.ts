/**
 * Lets every client read an answer given before its request body was read,
 * above all the 413 for a body over the limit. Such an answer closes the
 * connection; closing it while the client is still uploading makes the
 * client's next write fail (EPIPE, ECONNRESET), and many clients, Node's
 * fetch among them, then report that failure instead of the answer they were
 * sent. So the rest of the upload is read and thrown away before the answer
 * is written, up to {@link drainLimits}; past them the answer goes out and
 * the connection closes anyway, as before.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export interface DrainLimits {
  /** Body bytes read and discarded at most, after the answer was decided. */
  maxBytes: number;
  /** How long the client may take to finish its upload. */
  maxMs: number;
}

/** At least 16 MiB and one more body limit: a client overshooting the limit a few times over still reads its 413. */
export function drainLimits(bodyLimit: number): DrainLimits {
  return { maxBytes: Math.max(16 * 1024 * 1024, bodyLimit), maxMs: 10_000 };
}

/** Reads and discards the rest of `raw`; true when the body ended within the limits. */
function drain(raw: IncomingMessage, limits: DrainLimits): Promise<boolean> {
  return new Promise((resolve) => {
    let bytes = 0;
    const finish = (ended: boolean): void => {
      clearTimeout(timer);
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('close', onClose);
      resolve(ended);
    };
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length;
      if (bytes > limits.maxBytes) finish(false);
    };
    const onEnd = (): void => finish(true);
    const onClose = (): void => finish(raw.complete);
    const timer = setTimeout(() => finish(false), limits.maxMs);
    raw.on('data', onData);
    raw.once('end', onEnd);
    raw.once('close', onClose);
    // The body parser may have stopped reading (a content length over the limit is refused unread).
    raw.resume();
  });
}

async function bodyDrain(app: FastifyInstance, opts: { limits: DrainLimits }): Promise<void> {
  app.addHook('onSend', async (request, reply, payload) => {
    const raw = request.raw;
    // Injected requests (light-my-request) leave `complete` undefined: they have no socket to keep open.
    if (raw.complete !== false || raw.destroyed) return payload;
    if (!(await drain(raw, opts.limits))) {
      // The rest of the body is not worth reading: close rather than let Node read it after the answer.
      reply.header('connection', 'close');
      request.log.info({ maxBytes: opts.limits.maxBytes, maxMs: opts.limits.maxMs }, 'request body not drained within the limits; closing the connection');
    }
    return payload;
  });
}

export const bodyDrainPlugin = fp(bodyDrain, { name: 'baton-body-drain', fastify: '5.x' });
