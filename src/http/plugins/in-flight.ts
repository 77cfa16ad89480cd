/**
 * Whether a request has the process to itself, over every server it runs:
 * {@link requestAlone} tells the store when a commit may run on the event
 * loop without holding up anyone (`Store.commitInline`). Alone means the
 * only request in flight, on the connection that every request of the last
 * {@link QUIET_MS} came on: a lone agent (or a framework's saver) writing
 * one checkpoint at a time, with a scrape or a probe now and then on
 * connections of their own. Clients taking turns, or an open loop of many,
 * switch connections all the time and are never alone (measured: with
 * every commit alone in the store run on the event loop, the open loop's
 * reads waited 18–29 ms at p50 instead of 2.5; counting open connections
 * instead let an idle keep-alive connection of a metrics scrape turn it off).
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** How long after a request on another connection a request is not alone. */
const QUIET_MS = 100;

let inFlight = 0;
let lastConnection: object | undefined;
let switchedAt = Number.NEGATIVE_INFINITY;

function answered(): void {
  inFlight -= 1;
}

/** Whether the request asking (if any) is the only one in flight, on the connection every recent request came on. */
export function requestAlone(): boolean {
  return inFlight <= 1 && performance.now() - switchedAt > QUIET_MS;
}

async function inFlightPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', (request, reply, done) => {
    inFlight += 1;
    const connection = request.raw.socket;
    if (connection !== lastConnection) {
      lastConnection = connection;
      switchedAt = performance.now();
    }
    // A response closes once, whether it was answered or its connection went first.
    reply.raw.once('close', answered);
    done();
  });
}

export const requestsInFlightPlugin = fp(inFlightPlugin, { name: 'baton-requests-in-flight', fastify: '5.x' });
