/**
 * GET /v1/keys: the public keys that verify finalization signatures.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { Signer } from '../../service/signing.js';

export async function keyRoutes(app: FastifyInstance, { signer }: { signer: Signer | undefined }): Promise<void> {
  app.get('/v1/keys', { schema: { tags: ['compliance'], summary: 'Public keys of finalization signatures' } }, async () => ({
    items: signer ? [signer.publicKey] : [],
  }));
}
