/**
 * The event outbox keeps events for BATON_EVENT_RETENTION_MS: the
 * maintenance runner trims older ones, and a reader resuming from a trimmed
 * event is told it missed some (410 events_expired, with the oldest event
 * still held) instead of silently skipping them — by page and by SSE.
 */
import { describe, expect, it } from 'vitest';
import { auth, checkpointBody, useClockedTestApp } from '../support/app.js';

describe('event retention', () => {
  const { app, clock } = useClockedTestApp('2026-11-01T00:00:00.000Z', { config: { eventRetentionMs: 60 * 60 * 1000, retentionSweepMs: 20 } });

  const events = async (query = '') => app().app.inject({ method: 'GET', url: `/v1/events${query}`, headers: auth('auditor') });

  it('trims events past their retention; resuming from one is 410 events_expired naming the oldest held', async () => {
    const t = app();
    await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('old-task') });
    await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('old-task') });
    // A reader that saw the first old event, and not the second.
    const [old] = ((await events()).json() as { items: { cursor: string }[] }).items;
    // Two hours later, past the one-hour retention: new work, and the runner trims the old events.
    clock.advance(2 * 60 * 60 * 1000);
    await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('new-task') });
    let held: { cursor: string; data: { taskId: string } }[] = [];
    for (let i = 0; i < 200; i++) {
      held = ((await events()).json() as { items: typeof held }).items;
      if (held.every((e) => e.data.taskId === 'new-task')) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(held.map((e) => e.data.taskId)).toEqual(['new-task']);

    const expired = await events(`?after=${old!.cursor}`);
    expect(expired.statusCode).toBe(410);
    expect(expired.json()).toMatchObject({ code: 'events_expired', oldestId: held[0]!.cursor });
    const stream = await t.app.inject({ method: 'GET', url: '/v1/events', headers: { ...auth('auditor'), accept: 'text/event-stream', 'last-event-id': old!.cursor } });
    expect(stream.statusCode).toBe(410);
    // Resuming from an event still held goes on as before.
    expect((await events(`?after=${held[0]!.cursor}`)).statusCode).toBe(200);
  });
});
