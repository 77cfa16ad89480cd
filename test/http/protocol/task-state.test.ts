/**
 * A task's state in the A2A / MCP Tasks vocabulary: what sets it, what it
 * means (only completed is success; paused is not finished), and the task
 * view with its lease, latest and recovery point.
 */
import { describe, expect, it } from 'vitest';
import { isFinished, isPaused, isSuccess, TASK_STATES } from '../../../src/domain/task-state.js';
import { useTestApp } from '../../support/app.js';
import { expectProblem } from '../../support/problems.js';
import { call, create, ok } from './helpers.js';

describe('task state', () => {
  const app = useTestApp();

  it('follows the work: working on a checkpoint, paused on request, finished on finalization, working again on new work', async () => {
    const t = app();
    const cp = await create(t, 's-1');
    expect(await ok(t, 'GET', '/v1/tasks/s-1')).toMatchObject({
      taskId: 's-1',
      state: 'working',
      finished: false,
      paused: false,
      latestCheckpointId: cp.id,
      recoveryPointId: cp.id,
      lease: null,
      openHandoff: null,
      checkpoints: 1,
    });
    expect(await ok(t, 'PUT', '/v1/tasks/s-1/state', { state: 'input-required', reason: 'which database?' })).toMatchObject({ state: 'input-required', paused: true, finished: false, success: false });
    await ok(t, 'POST', `/v1/checkpoints/${cp.id}/finalize`, { status: 'completed' });
    expect(await ok(t, 'GET', '/v1/tasks/s-1')).toMatchObject({ state: 'completed', finished: true, success: true });
    await create(t, 's-1');
    expect((await ok(t, 'GET', '/v1/tasks/s-1')).state).toBe('working');
    const abandoned = await create(t, 's-1');
    await ok(t, 'POST', `/v1/checkpoints/${abandoned.id}/finalize`, { status: 'abandoned' });
    expect(await ok(t, 'GET', '/v1/tasks/s-1')).toMatchObject({ state: 'canceled', finished: true, success: false });
    const audit = (await ok(t, 'GET', '/v1/tasks/s-1/audit')).items as { action: string }[];
    expect(audit.map((e) => e.action)).toContain('task.state');
  });

  it('refuses states only the protocol sets, and unknown tasks', async () => {
    const t = app();
    await create(t, 's-2');
    expectProblem(await call(t, 'PUT', '/v1/tasks/s-2/state', { state: 'blocked' }), 400, 'validation_failed');
    expectProblem(await call(t, 'PUT', '/v1/tasks/s-2/state', { state: 'done' }), 400, 'validation_failed');
    expectProblem(await call(t, 'PUT', '/v1/tasks/nobody/state', { state: 'working' }), 404, 'not_found');
    expectProblem(await call(t, 'GET', '/v1/tasks/nobody'), 404, 'not_found');
  });
});

it('reads only completed as success, paused states as unfinished, and an unknown state as neither', () => {
  expect(TASK_STATES.filter(isSuccess)).toEqual(['completed']);
  expect(TASK_STATES.filter(isFinished)).toEqual(['completed', 'failed', 'canceled']);
  expect(TASK_STATES.filter(isPaused)).toEqual(['input-required', 'auth-required']);
  for (const unknown of ['succeeded', 'done', '', 'COMPLETED']) {
    expect([isSuccess(unknown), isFinished(unknown), isPaused(unknown)]).toEqual([false, false, false]);
  }
});
