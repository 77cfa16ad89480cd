/**
 * The task a write belongs to, sent as `Baton-Task-Id` (percent-encoded) so
 * that a balancer in front of a fleet can hash on it (`docs/fleet.md`, task
 * affinity), over a real socket: on a create always, on a write to a
 * checkpoint whose task the client has seen, never on a read; and without a
 * lease the client never reads a checkpoint just to learn its task.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listen, work, type Listening } from './support/server.js';

let server: Listening;
beforeAll(async () => {
  server = await listen();
});
afterAll(async () => {
  await server?.close();
});

it('sends the task of each write as Baton-Task-Id, and reads nothing to learn it', async () => {
  const sent: { method: string; path: string; hint: string | null }[] = [];
  const client = server.client({
    fetch: (input, init) => {
      sent.push({ method: init.method ?? 'GET', path: new URL(input).pathname, hint: new Headers(init.headers).get('baton-task-id') });
      return fetch(input, init);
    },
  });
  const task = 'hint/tâche 1';
  const created = await client.checkpoints.create(work(task, 'agent-a'));
  await client.checkpoints.patch(created.id, { executionState: { phase: 'testing' } }, { ifMatch: 1 });
  await client.checkpoints.get(created.id);

  // A second client that never saw the checkpoint: its patch carries no hint, and it reads nothing first.
  const other: typeof sent = [];
  const stranger = server.client({
    fetch: (input, init) => {
      other.push({ method: init.method ?? 'GET', path: new URL(input).pathname, hint: new Headers(init.headers).get('baton-task-id') });
      return fetch(input, init);
    },
  });
  await stranger.checkpoints.patch(created.id, { executionState: { phase: 'reviewing' } }, { ifMatch: 2 });

  expect(sent.map(({ method, hint }) => [method, hint])).toEqual([
    ['POST', encodeURIComponent(task)],
    ['PATCH', encodeURIComponent(task)],
    ['GET', null],
  ]);
  expect(other.map(({ method, hint }) => [method, hint])).toEqual([['PATCH', null]]);
});
