/**
 * Records of creates made beside others are compressed on a worker thread
 * (`compression-worker.ts`, `compressAhead`): the bytes are one zstd frame
 * or zlib's raw DEFLATE, as the thread's method says, what is stored reads
 * back, and a thread that fails leaves every value compressed on the calling
 * thread instead.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Decompressor } from 'zstd-napi';
import { compressionThread, decompress, isCompressed } from '../../../src/service/repository/compression.js';
import { CompressionWorker } from '../../../src/service/repository/compression-worker.js';
import { zstdBindingPath, ZstdEngine } from '../../../src/service/repository/zstd-engine.js';
import { decodeValue, tenantKeyspace } from '../../../src/store/keyspace.js';
import { auth, checkpointBody, useTestApp } from '../../support/app.js';

const dictionary = Buffer.from('{"taskId":"","agentId":"","executionState":{"completedItems":[]}}');
const options = { zlib: { level: 1, windowBits: 12, dictionary } };
const worker = new CompressionWorker(options);
const zstdWorker = new CompressionWorker({ zstd: { binding: zstdBindingPath()!, dictionary, level: 1 } });
afterAll(() => Promise.all([worker.close(), zstdWorker.close()]));

describe('CompressionWorker', () => {
  it('deflates to raw DEFLATE that zlib inflates back with the dictionary, many values at once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 20_000 }), { minLength: 1, maxLength: 20 }), async (arrays) => {
        const out = await Promise.all(arrays.map((array) => worker.compress(array)));
        for (const [i, array] of arrays.entries()) expect(inflateRawSync(out[i]!, { windowBits: 12, dictionary }).equals(Buffer.from(array))).toBe(true);
      }),
      { numRuns: 30 },
    );
    expect(worker.pending).toBe(0);
  });

  it("compresses to zstd frames that zstd's own reader gives back with the dictionary, many values at once", async () => {
    const reader = new Decompressor();
    reader.loadDictionary(dictionary);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 20_000 }), { minLength: 1, maxLength: 20 }), async (arrays) => {
        const out = await Promise.all(arrays.map((array) => zstdWorker.compress(array)));
        for (const [i, array] of arrays.entries()) expect(reader.decompress(out[i]!).equals(Buffer.from(array))).toBe(true);
      }),
      { numRuns: 30 },
    );
    expect(zstdWorker.pending).toBe(0);
  });

  it.runIf(process.platform === 'linux')('runs below the event loop: its thread is niced, this one is not', async () => {
    // A thread's nice value is field 19 of /proc/<pid>/task/<tid>/stat: index 16 once the pid and the parenthesised name are cut off.
    const nices = () =>
      new Map(
        readdirSync(`/proc/${process.pid}/task`).map((tid) => {
          const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
          return [Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])] as const;
        }),
      );
    const before = nices();
    const fresh = new CompressionWorker(options);
    try {
      await fresh.compress(Buffer.from('z'.repeat(3000)));
      const started = [...nices()].filter(([tid]) => !before.has(tid));
      expect(started.map(([, nice]) => nice)).toContain(19);
      expect(nices().get(process.pid)).toBe(before.get(process.pid));
    } finally {
      await fresh.close();
    }
  });

  it('refuses what waits when the thread stops, and is not used again', async () => {
    const stopped = new CompressionWorker(options);
    const refused = expect(stopped.compress(Buffer.from('x'.repeat(5000)))).rejects.toThrow(/stopped/);
    await stopped.close();
    await refused;
    expect(stopped.usable).toBe(false);
    await expect(stopped.compress(Buffer.from('y'))).rejects.toThrow(/not available/);
  });
});

describe('records of concurrent creates', () => {
  const testApp = useTestApp();

  it('are compressed with zstd on the thread, once each, and read back as created', async () => {
    const { app, store } = testApp();
    const thread = compressionThread(2);
    const before = thread.compressed;
    // The event loop's own compressor: a record the thread compressed must not be compressed here again (each create
    // is its task's first, so none is placed anew after another and hashed again, which would need new bytes).
    const onLoop = vi.spyOn(ZstdEngine.prototype, 'compress');
    const bodies = Array.from({ length: 40 }, (_, i) =>
      checkpointBody(`task-thread-${i}`, { contextSummary: { keyDecisions: [`decision ${i}: the sweeper owns expiry, and the lease table keeps the epoch`.repeat(8)] } }),
    );
    const created = await Promise.all(bodies.map((payload) => app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload })));
    expect(created.map((res) => res.statusCode)).toEqual(bodies.map(() => 201));
    const onThread = thread.compressed - before;
    expect(onThread).toBeGreaterThan(0);
    expect(onThread + onLoop.mock.calls.length).toBe(bodies.length);
    onLoop.mockRestore();
    for (const res of created) {
      const { id, taskId } = res.json() as { id: string; taskId: string };
      const stored = await store.transact(async (tx) => Buffer.from((await tx.get(tenantKeyspace('default').checkpoints.pack(taskId, id, 0)))!), { readOnly: true });
      expect(isCompressed(stored)).toBe(true);
      expect(stored[2]).toBe(2);
      const record = decodeValue<{ c: string; h: string }>(decompress(stored));
      const read = await app.inject({ method: 'GET', url: `/v1/checkpoints/${id}`, headers: auth() });
      expect(read.statusCode).toBe(200);
      expect(read.json()).toEqual(res.json());
      expect((read.json() as { compliance: { hash: string } }).compliance.hash).toBe(record.h);
    }
  });
});
