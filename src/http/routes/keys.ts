/**
 * GET /v1/keys: the public keys that verify finalization signatures and
 * evidence bundles, every one that signed anything in the store, whichever
 * instance answers.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../../service/context.js';
import { publicKeys } from '../../service/fleet/signing-keys.js';

export async function keyRoutes(app: FastifyInstance, { ctx }: { ctx: ServiceContext }): Promise<void> {
  app.get('/v1/keys', { schema: { tags: ['compliance'], summary: 'Public keys of finalization signatures and evidence bundles, from every instance' } }, async () => ({
    items: await publicKeys(ctx),
  }));
}
