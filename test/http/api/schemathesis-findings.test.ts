/**
 * What schemathesis found against `/openapi.json` of a running Baton
 * (`npm run fuzz:api`, `docs/reliability.md`), one test per defect, each
 * failing before its fix:
 * 1. a retention period of more years than a date holds answered 500;
 * 2. a task id of 101 to 200 characters was accepted on create, but every
 *    `/v1/tasks/{taskId}/…` route answered 414 for it;
 * 3. the "no control characters" rule of ids was not in the document, so
 *    ids a client drew from the document were refused;
 * 4. the document stated no response: every operation said "200, no body",
 *    so no answer could be checked against it, and none of the problems;
 * 5. a URL or headers over Node's 16 KB were answered with Fastify's own
 *    JSON, not a problem document;
 * 6. `/mcp` answers the MCP transport's refusals as JSON-RPC errors, which
 *    the document must say;
 * 7. PATCH's required If-Match header was not in the document.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../../../src/errors.js';
import { DOCUMENTED_OPERATIONS } from '../../../src/http/openapi-responses.js';
import { auth, checkpointBody, useTestApp } from '../../support/app.js';

const app = useTestApp();

interface Operation {
  parameters?: { in: string; name: string; required?: boolean; schema?: { pattern?: string } }[];
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, { pattern?: string }> } }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }>; links?: Record<string, { operationRef: string; parameters: Record<string, string> }> }>;
}

async function openapi(): Promise<{ paths: Record<string, Record<string, Operation>> }> {
  return (await app().app.inject({ method: 'GET', url: '/openapi.json' })).json();
}

describe('retention periods', () => {
  it('refuses a duration longer than a date can hold with 400, where it answered 500', async () => {
    expect((await app().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('long-policy') })).statusCode).toBe(201);
    const res = await app().app.inject({ method: 'PUT', url: '/v1/tasks/long-policy/policy', headers: auth('admin'), payload: { expireAfter: 'P07604Y26451095590W9056866D' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ field: 'expireAfter' }] });
    const longest = await app().app.inject({ method: 'PUT', url: '/v1/tasks/long-policy/policy', headers: auth('admin'), payload: { expireAfter: 'P9999Y99999M999999W9999999DT99999999H999999999M9999999999S' } });
    expect(longest.statusCode).toBe(200);
  });
});

describe('task ids in paths', () => {
  it('reads a task whose id has 200 characters, ASCII or not, where the router answered 414', async () => {
    for (const taskId of ['t'.repeat(200), 'é'.repeat(100) + '😀'.repeat(50)]) {
      expect(taskId.length).toBe(200);
      expect((await app().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId) })).statusCode).toBe(201);
      const res = await app().app.inject({ method: 'GET', url: `/v1/tasks/${encodeURIComponent(taskId)}/checkpoints` });
      expect(res.statusCode, res.body.slice(0, 200)).toBe(401);
      const read = await app().app.inject({ method: 'GET', url: `/v1/tasks/${encodeURIComponent(taskId)}/checkpoints`, headers: auth() });
      expect(read.statusCode, read.body.slice(0, 200)).toBe(200);
      expect((read.json() as { items: unknown[] }).items).toHaveLength(1);
    }
  });
});

describe('the OpenAPI document', () => {
  it('states the control-character rule of ids as a pattern, and the service keeps it', async () => {
    const spec = await openapi();
    const body = spec.paths['/v1/checkpoints']!.post!.requestBody!.content['application/json']!.schema;
    expect(body.properties!.taskId!.pattern).toBeDefined();
    expect(new RegExp(body.properties!.taskId!.pattern!).test('task\u0007')).toBe(false);
    expect(new RegExp(body.properties!.taskId!.pattern!).test('task-é')).toBe(true);
    const refused = await app().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('task\u0007') });
    expect(refused.json()).toMatchObject({ code: 'validation_failed', errors: [{ field: 'taskId', message: 'must not contain control characters' }] });
  });

  it('states every operation’s success answers and its problem answer, with every error code', async () => {
    const spec = await openapi();
    const operations = Object.entries(spec.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })));
    expect(operations.length).toBeGreaterThan(40);
    for (const { name, op } of operations) {
      const problem = op.responses.default?.content?.['application/problem+json']?.schema as { properties: { code: { enum: string[] } } } | undefined;
      expect(problem, name).toBeDefined();
      expect(problem!.properties.code.enum.sort(), name).toEqual(Object.keys(ERRORS).sort());
      expect(Object.keys(op.responses).filter((status) => /^[23]\d\d$/.test(status)).length, name).toBeGreaterThan(0);
    }
    expect(Object.keys(spec.paths['/v1/checkpoints']!.post!.responses).sort()).toEqual(['201', '202', 'default']);
    expect(Object.keys(spec.paths['/v1/tasks/{taskId}']!.delete!.responses).sort()).toEqual(['202', '204', 'default']);
    expect(Object.keys(spec.paths['/v1/checkpoints/{id}/resume-prompt']!.get!.responses['200']!.content!)).toContain('text/markdown');
  });

  it('names only operations that exist in its table of answers', async () => {
    const spec = await openapi();
    const fastifyPath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1');
    const existing = new Set(Object.entries(spec.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${fastifyPath(path)}`)));
    expect(DOCUMENTED_OPERATIONS.filter((operation) => !existing.has(operation))).toEqual([]);
  });

  it('says that /mcp answers the MCP transport’s refusals as JSON-RPC errors', async () => {
    const spec = await openapi();
    expect(Object.keys(spec.paths['/mcp']!.post!.responses.default!.content!).sort()).toEqual(['application/json', 'application/problem+json']);
  });

  it('states the If-Match header PATCH requires, and links a create to the operations on what it made', async () => {
    const spec = await openapi();
    expect(spec.paths['/v1/checkpoints/{id}']!.patch!.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'If-Match', required: true }));
    const links = spec.paths['/v1/checkpoints']!.post!.responses['201']!.links!;
    expect(Object.values(links)).toContainEqual({ operationRef: '#/paths/~1v1~1checkpoints~1{id}/patch', parameters: { id: '$response.body#/id', 'header.If-Match': '$response.header.ETag' } });
    for (const { operationRef } of Object.values(links)) {
      const [path, method] = operationRef.slice('#/paths/'.length).split('/') as [string, string];
      expect(spec.paths[path.replaceAll('~1', '/').replaceAll('~0', '~')]?.[method], operationRef).toBeDefined();
    }
  });
});

describe('requests Node refuses before routing', () => {
  it('answers a URL over 16 KB with a 431 problem document, where Fastify answered its own JSON', async () => {
    const base = new URL(await app().app.listen({ port: 0, host: '127.0.0.1' }));
    const answer = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      const req = request({ host: base.hostname, port: base.port, path: `/v1/tasks?cursor=${'x'.repeat(20_000)}`, headers: auth() }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(431);
    expect(answer.type).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(answer.body)).toMatchObject({ status: 431, code: 'headers_too_large', title: ERRORS.headers_too_large.title });
  });
});
