/**
 * The write queue's bookkeeping on a real journal: the records it marks
 * applied stay applied across a reopen, whatever appends were in flight
 * when it marked them. A reopen answers exactly the writes not yet applied,
 * in order — never one applied before (which would replay it) and never
 * one acknowledged and not applied (which would lose it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import type { CreateCheckpoint } from '../../src/domain/commands.js';
import type { JournalOptions } from '../../src/queue/journal.js';
import { WriteQueue } from '../../src/queue/write-queue.js';
import { checkpointBody } from '../support/app.js';

const dirs: string[] = [];
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'baton-write-queue-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const AT = '2026-11-23T10:00:00.000Z';
const input = checkpointInput.parse(checkpointBody('wq-task'));

function create(n: number): CreateCheckpoint {
  return {
    kind: 'checkpoint.create',
    operationId: `op:${n}`,
    fingerprint: '',
    actor: { tenant: 'default', role: 'writer', subject: 'writer' },
    at: AT,
    taskId: 'wq-task',
    checkpointId: `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`,
    input,
  };
}

async function open(d: string, journal: JournalOptions = {}): Promise<WriteQueue> {
  return (await WriteQueue.open({ dir: d, maxBytes: 64 * 1024 * 1024, journal })).queue;
}

const waiting = (queue: WriteQueue): string[] => queue.head(Number.MAX_SAFE_INTEGER).map((record) => record.command.operationId);

describe('write queue bookkeeping', () => {
  it('keeps applied writes applied when the queue empties while an append is in flight', async () => {
    const d = dir();
    const queue = await open(d);
    for (let n = 1; n <= 5; n++) await queue.enqueue(create(n), 'wq-task', AT);
    // Five applied while a sixth is being appended, then the sixth applied while a seventh is.
    const sixth = queue.enqueue(create(6), 'wq-task', AT);
    queue.done(5);
    await sixth;
    const seventh = queue.enqueue(create(7), 'wq-task', AT);
    queue.done(1);
    await seventh;
    expect(waiting(queue)).toEqual(['op:7']);
    await queue.close();

    const reopened = await open(d);
    try {
      expect(waiting(reopened)).toEqual(['op:7']);
    } finally {
      await reopened.close();
    }
  });

  it('reopens to exactly the writes not applied, for any interleaving of appends in flight and writes applied', async () => {
    const step = fc.record({ appends: fc.integer({ min: 0, max: 3 }), applied: fc.nat({ max: 4 }), inFlight: fc.boolean() });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (steps) => {
        const d = dir();
        const queue = await open(d);
        const accepted: string[] = [];
        let applied = 0;
        let n = 0;
        try {
          for (const { appends, applied: wanted, inFlight } of steps) {
            const started = Array.from({ length: appends }, () => {
              const command = create(++n);
              return queue.enqueue(command, 'wq-task', AT).then(() => accepted.push(command.operationId));
            });
            if (!inFlight) await Promise.all(started);
            // Only writes whose append finished are in the queue to be applied.
            const count = Math.min(wanted, queue.depth);
            queue.done(count);
            applied += count;
            await Promise.all(started);
          }
          expect(waiting(queue)).toEqual(accepted.slice(applied));
        } finally {
          await queue.close();
        }
        const reopened = await open(d);
        try {
          expect(waiting(reopened)).toEqual(accepted.slice(applied));
        } finally {
          await reopened.close();
        }
      }),
      { numRuns: 60 },
    );
  });

  it('answers a write its full disk refused 503 queue_disk_full naming the directory, keeps it out of the queue, and takes the next', async () => {
    const d = dir();
    let full = false;
    const queue = await open(d, {
      openLog: async (path) => {
        const real = await openFile(path, 'a');
        return {
          write: async (bytes: Buffer) => {
            if (!full) return real.write(bytes);
            full = false;
            throw Object.assign(new Error('ENOSPC: simulated'), { code: 'ENOSPC' });
          },
          datasync: () => real.datasync(),
          truncate: (length: number) => real.truncate(length),
          close: () => real.close(),
        };
      },
    });
    try {
      await queue.enqueue(create(1), 'wq-task', AT);
      full = true;
      await expect(queue.enqueue(create(2), 'wq-task', AT)).rejects.toMatchObject({ code: 'queue_disk_full', status: 503, detail: expect.stringContaining(d) });
      expect(queue.accepting).toBe(false);
      await queue.enqueue(create(3), 'wq-task', AT);
      expect(queue.accepting).toBe(true);
      expect(waiting(queue)).toEqual(['op:1', 'op:3']);
    } finally {
      await queue.close();
    }
    const reopened = await open(d);
    try {
      expect(waiting(reopened)).toEqual(['op:1', 'op:3']);
    } finally {
      await reopened.close();
    }
  });
});
