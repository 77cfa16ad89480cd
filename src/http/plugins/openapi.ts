/**
 * The OpenAPI 3.1 document, generated from the routes' zod schemas, at
 * `GET /openapi.json`, and Swagger UI at `/docs`. Swagger UI serves its own
 * assets from the package, so the page works offline and loads nothing from a
 * CDN.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import swagger, { type SwaggerTransform } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { documentedResponses, withLinks } from '../openapi-responses.js';
import { isPublicRoute } from './auth.js';

export const OPENAPI_ROUTE = '/openapi.json';
export const DOCS_PREFIX = '/docs';

const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

/**
 * Each operation's responses come from the table of `openapi-responses.ts`;
 * public routes say so in the document, so clients do not send a token they
 * do not need.
 */
const transform: SwaggerTransform = (document) => {
  const result = jsonSchemaTransform(document);
  const methods = [document.route.method].flat();
  const schema = { ...result.schema, response: documentedResponses(String(methods[0]), document.url) };
  if (!methods.every((method) => isPublicRoute(method, document.url))) return { ...result, schema };
  return { ...result, schema: { ...schema, security: [] } };
};

async function openapi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Baton',
        version,
        description: 'Checkpoints and handoffs for fleets of AI agents. Errors are RFC 9457 problems (application/problem+json).',
      },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A token from BATON_TOKENS or BATON_TOKENS_FILE.' } },
      },
      security: [{ bearer: [] }],
    },
    transform,
    transformObject: (document) => withLinks(jsonSchemaTransformObject(document)),
  });

  app.get(OPENAPI_ROUTE, { schema: { hide: true } }, async () => app.swagger());

  await app.register(swaggerUi, { routePrefix: DOCS_PREFIX });
}

export const openapiPlugin = fp(openapi, { name: 'baton-openapi', fastify: '5.x' });
