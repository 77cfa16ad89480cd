/**
 * What each operation answers, as the OpenAPI document states it: its
 * success statuses and media types, and, for every operation, the RFC 9457
 * problem it answers with on failure (`default`). The routes do not declare
 * response schemas to Fastify (a response schema would also filter what is
 * serialised), so the document takes them from this table; a test keeps it
 * in step with the routes (`test/http/openapi-responses.test.ts`), and
 * schemathesis checks the answers against it (`docs/reliability.md`).
 *
 * @module
 */
import { ERRORS } from '../errors.js';

/** A response in @fastify/swagger's form: `content` by media type, or `type: 'null'` for none. */
interface DocumentedResponse {
  description: string;
  content?: Record<string, { schema: Record<string, unknown> }>;
  type?: 'null';
}

const empty = (description: string): DocumentedResponse => ({ description, type: 'null' });

const anything = { schema: {} };
const json = (description: string, schema: Record<string, unknown> = {}): DocumentedResponse => ({ description, content: { 'application/json': { schema } } });
const list: Record<string, unknown> = {
  type: 'object',
  required: ['items'],
  properties: { items: { type: 'array' }, nextCursor: { type: 'string' } },
};
const queued = json('Accepted by the durable local write queue while the store is unavailable (Baton-Queued: true); applied once it is back.', {
  type: 'object',
  required: ['queued', 'operationId', 'checkpointId'],
  properties: { queued: { const: true }, operationId: { type: 'string' }, checkpointId: { type: 'string' }, version: { type: 'integer' } },
});

/** The problem document every failure answers with (`src/http/plugins/errors.ts`). */
export const PROBLEM_SCHEMA = {
  type: 'object',
  required: ['type', 'title', 'status', 'code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    code: { type: 'string', enum: Object.keys(ERRORS) },
    detail: { type: 'string' },
    instance: { type: 'string' },
    requestId: { type: 'string' },
    errors: { type: 'array', items: { type: 'object', required: ['field', 'message'], properties: { field: { type: 'string' }, message: { type: 'string' } } } },
  },
} as const;

const problem: DocumentedResponse = {
  description: 'An RFC 9457 problem: a stable code and a sentence a person can act on (docs/errors.md).',
  content: { 'application/problem+json': { schema: PROBLEM_SCHEMA } },
};

/** Success answers by operation (`METHOD url`, the route's own pattern); an operation not named answers 200 with JSON. */
const SUCCESS: Readonly<Record<string, Record<string, DocumentedResponse>>> = {
  'POST /v1/checkpoints': { 201: json('The checkpoint, version 1 (ETag: "1", Location).'), 202: queued },
  'GET /v1/checkpoints/:id': { 200: json('The checkpoint (ETag: its version).'), 304: empty('Not modified since the ETag sent in If-None-Match.') },
  'PATCH /v1/checkpoints/:id': { 200: json('The checkpoint at its next version.'), 202: queued },
  'POST /v1/checkpoints/:id/finalize': { 200: json('The finalized checkpoint.'), 202: queued },
  'POST /v1/checkpoints/:id/links': { 201: json('The parent with its new child.'), 202: queued },
  'GET /v1/checkpoints': { 200: json('Matching checkpoints, paged.', list) },
  'GET /v1/tasks': { 200: json('Task ids, paged.', list) },
  'GET /v1/tasks/:taskId/checkpoints': { 200: json('The task’s checkpoints, newest first, paged.', list) },
  'GET /v1/tasks/:taskId/evidence': { 200: { description: 'The evidence bundle.', content: { 'application/x-tar': anything } } },
  'GET /v1/tasks/:taskId/audit': { 200: { description: 'The hash-chained audit entries, paged; with Accept: application/x-ndjson, an evidence export.', content: { 'application/json': { schema: list }, 'application/x-ndjson': anything } } },
  'DELETE /v1/tasks/:taskId': { 204: empty('Purged.'), 202: json('The purge goes on in the background.') },
  'POST /v1/checkpoints/:id/handoff': { 201: json('The handoff, its checkpoint and the continuation prompt.'), 202: queued },
  'POST /v1/tasks/:taskId/lease': { 201: json('The lease (Location).') },
  'POST /v1/tasks/:taskId/recoveries': { 201: json('The recovery and its continuation prompt.') },
  'GET /v1/checkpoints/:id/resume-prompt': { 200: { description: 'The continuation prompt; JSON with Accept: application/json.', content: { 'text/markdown': anything, 'application/json': anything } } },
  'POST /v1/import': { 201: json('The imported checkpoint.'), 202: queued },
  'GET /v1/checkpoints/:id/export': {
    200: { description: 'The checkpoint in the format asked for.', content: { 'application/json': anything, 'application/xml': anything, 'text/markdown': anything, 'text/plain': anything } },
  },
  'GET /v1/events': { 200: { description: 'Events after the cursor; a live stream with Accept: text/event-stream.', content: { 'application/json': { schema: list }, 'text/event-stream': anything } } },
  'POST /v1/admin/rekey': { 202: json('The re-seal pass, started or already running.') },
  'POST /mcp': { 200: { description: 'A JSON-RPC answer.', content: { 'application/json': anything } }, 202: empty('A notification, accepted.') },
};

/**
 * The MCP transport (the SDK's) answers a request it refuses with a
 * JSON-RPC error, not a problem; Baton's own checks before it (the token,
 * the rate limit) answer problems.
 */
const mcpFailure: DocumentedResponse = {
  description: 'A problem from Baton (token, rate limit), or a JSON-RPC error from the MCP transport.',
  content: {
    ...problem.content,
    'application/json': { schema: { type: 'object', required: ['jsonrpc', 'error'], properties: { jsonrpc: { const: '2.0' }, error: { type: 'object', required: ['code', 'message'] } } } },
  },
};

/** The responses of the operation `method url`, for the document. */
export function documentedResponses(method: string, url: string): Record<string, DocumentedResponse> {
  return { ...(SUCCESS[`${method} ${url}`] ?? { 200: json('The result.') }), default: url === '/mcp' ? mcpFailure : problem };
}

/** The operations the table names, for the test that keeps it in step with the routes. */
export const DOCUMENTED_OPERATIONS: readonly string[] = Object.keys(SUCCESS);

/** A link's target (`METHOD /openapi/path`) and where its parameters come from (OpenAPI runtime expressions). */
interface Link {
  to: string;
  parameters: Record<string, string>;
}

const checkpointId = { id: '$response.body#/id' };
const taskId = { taskId: '$response.body#/taskId' };
const onCheckpoint = (path: string, method = 'GET'): Link => ({ to: `${method} /v1/checkpoints/{id}${path}`, parameters: checkpointId });
const onTask = (path: string, method = 'GET'): Link => ({ to: `${method} /v1/tasks/{taskId}${path}`, parameters: taskId });

/**
 * Where an answer's ids lead (OpenAPI links), so that a client generated
 * from the document, and schemathesis's stateful phase, can follow a
 * create to the operations on what it created. By `METHOD path status`.
 */
const LINKS: Readonly<Record<string, readonly Link[]>> = {
  'POST /v1/checkpoints 201': [
    onCheckpoint(''),
    { to: 'PATCH /v1/checkpoints/{id}', parameters: { ...checkpointId, 'header.If-Match': '$response.header.ETag' } },
    onCheckpoint('/finalize', 'POST'),
    onCheckpoint('/links', 'POST'),
    onCheckpoint('/lineage'),
    onCheckpoint('/revisions'),
    onCheckpoint('/resume-prompt'),
    onCheckpoint('/export'),
    onCheckpoint('/stale-check', 'POST'),
    onCheckpoint('/handoff', 'POST'),
    onTask(''),
    onTask('/checkpoints'),
    onTask('/checkpoints/latest'),
    onTask('/audit'),
    onTask('/audit/verify'),
    onTask('/policy'),
    onTask('/policy', 'PUT'),
    onTask('/legal-hold', 'PUT'),
    onTask('/recovery-point'),
    onTask('/evidence'),
    onTask('/lease', 'POST'),
    onTask('/recoveries', 'POST'),
    onTask('/compact', 'POST'),
    onTask('/state', 'PUT'),
    onTask('', 'DELETE'),
  ],
  'POST /v1/checkpoints/{id}/handoff 201': [
    { to: 'GET /v1/handoffs/{id}', parameters: { id: '$response.body#/handoff/id' } },
    { to: 'POST /v1/handoffs/{id}/ack', parameters: { id: '$response.body#/handoff/id' } },
  ],
  'POST /v1/tasks/{taskId}/lease 201': [
    { to: 'POST /v1/leases/{id}/renew', parameters: { id: '$response.body#/leaseId' } },
    { to: 'POST /v1/leases/{id}/release', parameters: { id: '$response.body#/leaseId' } },
  ],
  'POST /v1/tasks/{taskId}/recoveries 201': [
    { to: 'GET /v1/recoveries/{id}', parameters: { id: '$response.body#/recovery/id' } },
    { to: 'POST /v1/recoveries/{id}/complete', parameters: { id: '$response.body#/recovery/id' } },
  ],
};

interface OpenApiDocument {
  paths?: Record<string, Record<string, { parameters?: unknown[]; responses?: Record<string, { links?: Record<string, unknown> }> }>>;
}

/**
 * Headers an operation reads in its handler rather than through its route
 * schema (so that their absence is a 428 with its own code, not a 400): the
 * document states them all the same.
 */
const HEADERS: Readonly<Record<string, readonly Record<string, unknown>[]>> = {
  'PATCH /v1/checkpoints/{id}': [
    { in: 'header', name: 'If-Match', required: true, description: 'The checkpoint’s current ETag, e.g. "3"; absent: 428 precondition_required, stale: 412 version_conflict.', schema: { type: 'string' } },
  ],
};

/** Adds {@link LINKS} and {@link HEADERS} to the generated document; a link to an operation the document lacks is left out. */
export function withLinks<D>(document: D): D {
  const paths = (document as OpenApiDocument).paths ?? {};
  for (const [at, headers] of Object.entries(HEADERS)) {
    const [method, path] = at.split(' ') as [string, string];
    const operation = paths[path]?.[method.toLowerCase()];
    if (operation !== undefined) operation.parameters = [...(operation.parameters ?? []), ...headers];
  }
  for (const [from, links] of Object.entries(LINKS)) {
    const [method, path, status] = from.split(' ') as [string, string, string];
    const response = paths[path]?.[method.toLowerCase()]?.responses?.[status];
    if (response === undefined) continue;
    response.links = Object.fromEntries(
      links
        .filter(({ to }) => {
          const [toMethod, toPath] = to.split(' ') as [string, string];
          return paths[toPath]?.[toMethod.toLowerCase()] !== undefined;
        })
        .map(({ to, parameters }) => {
          const [toMethod, toPath] = to.split(' ') as [string, string];
          const name = `${toMethod.toLowerCase()}${toPath.replace(/[{}]/g, '').replace(/\/(\w)/g, (_, c: string) => c.toUpperCase()).replace(/[^A-Za-z0-9]/g, '')}`;
          return [name, { operationRef: `#/paths/${toPath.replaceAll('~', '~0').replaceAll('/', '~1')}/${toMethod.toLowerCase()}`, parameters }];
        }),
    );
  }
  return document;
}
