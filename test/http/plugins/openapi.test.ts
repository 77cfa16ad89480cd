import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './build-test-app.js';

describe('the OpenAPI plugin', () => {
  let test: TestApp | undefined;
  afterEach(async () => {
    await test?.app.close();
    test = undefined;
  });

  it('serves an OpenAPI 3.1 document of the routes, built from their zod schemas, with bearer auth', async () => {
    test = await buildTestApp();
    const res = await test.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const spec = res.json();
    expect(spec.openapi).toMatch(/^3\.1/);
    expect(spec.info).toMatchObject({ title: 'Baton', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(spec.components.securitySchemes.bearer).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(spec.security).toEqual([{ bearer: [] }]);
    const post = spec.paths['/test/checkpoints'].post;
    const schema = post.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(expect.arrayContaining(['taskId', 'iteration', 'executionState']));
    expect(schema.properties.executionState.properties.phase.enum).toContain('planning');
    expect(spec.paths['/healthz'].get.security).toEqual([]);
  });

  it('leaves /docs and /openapi.json out of the document', async () => {
    test = await buildTestApp();
    const spec = (await test.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(spec.paths).filter((path) => path.startsWith('/docs') || path === '/openapi.json')).toEqual([]);
  });

  it('serves Swagger UI at /docs from local assets, without a CDN', async () => {
    test = await buildTestApp();
    const page = await test.app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).not.toMatch(/(src|href)="https?:/);
    const bundle = await test.app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' });
    expect(bundle.statusCode).toBe(200);
  });
});
