/**
 * The partition scenarios' history checker (`test/support/history.ts`) on
 * histories made by hand: a clean history passes, and each violation the
 * issue names is found — a fork of an If-Match chain, two acknowledgers of
 * one handoff, two holders of one lease epoch, an acknowledged write lost or
 * applied twice. An unanswered operation is not held against the service.
 */
import { expect, it } from 'vitest';
import { checkHistory, type Operation, type Recorded } from '../support/history.js';

const at = (op: Operation, instance = 0): Recorded => ({ instance, invokedAt: 0, answeredAt: 1, op });

const clean: Recorded[] = [
  at({ kind: 'create', taskId: 't', status: 201, checkpointId: 'c1' }),
  at({ kind: 'create', taskId: 't', status: 202, checkpointId: 'c2' }, 1),
  at({ kind: 'create', taskId: 't', checkpointId: 'c3' }),
  at({ kind: 'patch', checkpointId: 'c1', ifMatch: 1, status: 200, version: 2 }),
  at({ kind: 'patch', checkpointId: 'c1', ifMatch: 1, status: 412 }, 1),
  at({ kind: 'patch', checkpointId: 'c1', ifMatch: 2, status: 202, version: 3 }),
  at({ kind: 'ack', handoffId: 'h', agentId: 'a', status: 200 }),
  at({ kind: 'ack', handoffId: 'h', agentId: 'b', status: 409 }, 1),
  at({ kind: 'lease', taskId: 't', agentId: 'a', status: 201, epoch: 1 }),
  at({ kind: 'lease', taskId: 't', agentId: 'b', status: 201, epoch: 2 }, 1),
];

it('passes a clean history, counting acknowledged and unanswered operations', () => {
  expect(checkHistory(clean, new Map([['t', ['c2', 'c1']]]))).toEqual({
    violations: [],
    figures: { operations: 10, acknowledged: 7, unanswered: 1, lost: 0, duplicated: 0 },
  });
});

it('finds a forked If-Match chain, two acknowledgers, two holders of an epoch, a lost write and a duplicated one', () => {
  const history = [
    ...clean,
    at({ kind: 'patch', checkpointId: 'c1', ifMatch: 2, status: 200, version: 3 }, 1),
    at({ kind: 'ack', handoffId: 'h', agentId: 'c', status: 200 }, 1),
    at({ kind: 'lease', taskId: 't', agentId: 'c', status: 201, epoch: 2 }),
    at({ kind: 'create', taskId: 'u', status: 201, checkpointId: 'c4' }),
  ];
  const { violations, figures } = checkHistory(history, new Map([['t', ['c2', 'c1', 'c1']]]));
  expect(violations.map((v) => v.check).sort()).toEqual(['acknowledged-present-once', 'acknowledged-present-once', 'if-match-linear', 'one-acknowledger', 'one-holder-per-epoch']);
  expect(figures).toMatchObject({ lost: 1, duplicated: 1 });
});
