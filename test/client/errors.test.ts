/**
 * `BatonError` over a real socket: the service's problem document, whole,
 * with its status, code, detail and every offending field lifted onto the
 * error; an answer that is not a problem (a proxy's HTML page) is still a
 * `BatonError`, with a code that says so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatonClient, BatonError, UNEXPECTED_RESPONSE } from '../../src/client/index.js';
import { ERRORS } from '../../src/errors.js';
import { ScriptedProxy } from './support/proxy.js';
import { listen, work, type Listening } from './support/server.js';

describe('BatonError, over a real socket', () => {
  let server: Listening;

  beforeAll(async () => {
    server = await listen();
  });
  afterAll(async () => {
    await server?.close();
  });

  const refusal = async (call: Promise<unknown>): Promise<BatonError> => {
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BatonError);
    return error as BatonError;
  };

  it('carries the problem of a validation failure: status, code, detail, every field, and the whole document', async () => {
    const error = await refusal(
      server.client().checkpoints.create(work('errors-task', 'agent-1', { iteration: -1, executionState: { phase: 'dreaming' as never } })),
    );
    expect(error.name).toBe('BatonError');
    expect(error.status).toBe(400);
    expect(error.code).toBe('validation_failed');
    expect(error.detail).toContain(ERRORS.validation_failed.message);
    expect(error.message).toBe(error.detail);
    expect(error.errors.map((e) => e.field).sort()).toEqual(['executionState.phase', 'iteration']);
    expect(error.problem).toMatchObject({
      type: 'https://baton.dev/problems/validation_failed',
      title: ERRORS.validation_failed.title,
      status: 400,
      code: 'validation_failed',
      instance: '/v1/checkpoints',
    });
    expect(error.requestId).toEqual(expect.any(String));
    expect(error.requestId).toBe(error.problem.requestId);
  });

  it('keeps members some codes add (the current epoch of lease_required) and has no field errors when none were named', async () => {
    const holder = server.client();
    await holder.leases.acquire('errors-leased', { agentId: 'holder', ttlMs: 60_000 });
    const error = await refusal(server.client().checkpoints.create(work('errors-leased', 'intruder')));
    expect(error).toMatchObject({ status: 428, code: 'lease_required', errors: [] });
    expect(error.problem.epoch).toBe(1);
  });

  it('401 without a token, 404 for an id that does not exist', async () => {
    const anonymous = new BatonClient({ baseUrl: server.url });
    expect(await refusal(anonymous.tasks.get('errors-task'))).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(await refusal(server.client().handoffs.get('01890a5d-ac96-774b-bcce-b302099a8057'))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('an answer that is not a problem document is a BatonError with code unexpected_response and an excerpt of the body', async () => {
    const proxy = await ScriptedProxy.start(server.url);
    try {
      proxy.script({ status: 502, headers: { 'content-type': 'text/html' }, body: '<html><body>Bad gateway</body></html>' });
      const error = await refusal(server.client({ baseUrl: proxy.url, retries: 0 }).tasks.get('errors-task'));
      expect(error).toMatchObject({ status: 502, code: UNEXPECTED_RESPONSE, errors: [] });
      expect(error.problem.body).toContain('Bad gateway');
    } finally {
      await proxy.close();
    }
  });
});
