/**
 * Task lanes: same-task writes of one process take turns before their
 * transactions, so on FoundationDB they never conflict with each other.
 * `TaskLanes` runs one piece of work per lane at a time, in order, and
 * lanes apart at once; a failed piece frees its lane. Through the service,
 * with lanes on, concurrent creates on one task never have two write
 * transactions open at once (counted by a wrapper around the real LMDB
 * store, whose own single writer would serialize their commits anyway),
 * while creates on two tasks do; without lanes they pile up.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import type { CreateCheckpoint } from '../../src/domain/commands.js';
import { execute } from '../../src/service/execute.js';
import { standaloneContext } from '../../src/service/standalone.js';
import { TaskLanes } from '../../src/service/task-lanes.js';
import type { Store, TransactionBody, TransactOptions } from '../../src/store/store.js';
import { checkpointBody } from '../support/app.js';
import { serviceHarness, type ServiceHarness } from './service-context.js';

/** A promise and the hand that settles it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('TaskLanes', () => {
  it('runs the work of one lane one at a time, in the order it came', async () => {
    const lanes = new TaskLanes();
    const log: string[] = [];
    const gates = [deferred(), deferred(), deferred()];
    const runs = gates.map((gate, i) =>
      lanes.run('task-a', async () => {
        log.push(`start ${i}`);
        await gate.promise;
        log.push(`end ${i}`);
        return i;
      }),
    );
    await turn();
    expect(log).toEqual(['start 0']);
    gates[2]!.resolve();
    gates[1]!.resolve();
    await turn();
    // The later ones are released but wait for the first.
    expect(log).toEqual(['start 0']);
    gates[0]!.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2]);
    expect(log).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
  });

  it('runs different lanes at once', async () => {
    const lanes = new TaskLanes();
    const gate = deferred();
    const started: string[] = [];
    const a = lanes.run('task-a', async () => {
      started.push('a');
      await gate.promise;
    });
    const b = lanes.run('task-b', async () => {
      started.push('b');
      await gate.promise;
    });
    await turn();
    expect(started).toEqual(['a', 'b']);
    gate.resolve();
    await Promise.all([a, b]);
  });

  it('frees the lane when a piece of work fails, and the next runs', async () => {
    const lanes = new TaskLanes();
    const failing = lanes.run('task-a', async () => {
      await turn();
      throw new Error('The write was refused.');
    });
    const next = lanes.run('task-a', async () => 'ran');
    await expect(failing).rejects.toThrow('The write was refused.');
    expect(await next).toBe('ran');
  });
});

/** The real store, counting the write transactions open at once. */
class Counting implements Store {
  open = 0;
  most = 0;
  constructor(private readonly inner: Store) {}
  get name(): Store['name'] {
    return this.inner.name;
  }
  get commitOutcomeKnown(): boolean {
    return this.inner.commitOutcomeKnown;
  }
  async transact<T>(body: TransactionBody<T>, options?: TransactOptions): Promise<T> {
    if (options?.readOnly === true) return this.inner.transact(body, options);
    this.open += 1;
    this.most = Math.max(this.most, this.open);
    try {
      return await this.inner.transact(body, options);
    } finally {
      this.open -= 1;
    }
  }
  ping(): Promise<void> {
    return this.inner.ping();
  }
  compact(): Promise<boolean> {
    return this.inner.compact();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

describe('lanes in the service', () => {
  let harness: ServiceHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  const actor = { tenant: 'default', role: 'writer', subject: 'writer' } as const;
  let n = 0;
  function create(taskId: string): CreateCheckpoint {
    n += 1;
    const suffix = String(n).padStart(12, '0');
    return { kind: 'checkpoint.create', operationId: `op:lanes-${n}`, fingerprint: '', actor, at: new Date().toISOString(), taskId, checkpointId: `01900000-0000-7000-8000-${suffix}`, input: checkpointInput.parse(checkpointBody(taskId)) };
  }

  async function most(lanes: boolean, tasks: string[]): Promise<number> {
    harness = await serviceHarness();
    const store = new Counting(harness.store);
    // Lanes named either way: over FoundationDB a context turns them on by default (BATON_TASK_LANES=auto).
    const ctx = standaloneContext(store, { lanes: lanes ? new TaskLanes() : undefined });
    // The tenant's first write (its store header) is made before the burst.
    await execute(ctx, create(tasks[0]!));
    store.most = 0;
    await Promise.all(Array.from({ length: 20 }, (_, i) => execute(ctx, create(tasks[i % tasks.length]!))));
    return store.most;
  }

  it('with lanes on, never opens two write transactions of one task at once', async () => {
    expect(await most(true, ['one-task'])).toBe(1);
  });

  it('with lanes on, still writes two tasks at once', async () => {
    expect(await most(true, ['task-a', 'task-b'])).toBe(2);
  });

  it('without lanes, the same creates open their transactions together', async () => {
    expect(await most(false, ['one-task'])).toBeGreaterThan(1);
  });
});
