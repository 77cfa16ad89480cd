/**
 * Checkpoint records are stored compressed (`compression.ts`): what is
 * written comes back byte for byte by either method (zstd, written now, and
 * DEFLATE, written by earlier releases and in a store of the `spaces`
 * layout), a record written uncompressed by an earlier release still reads,
 * and a damaged value is refused, never expanded into memory it claims.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inflateRawSync } from 'node:zlib';
import { Decompressor } from 'zstd-napi';
import { compress, CompressionError, decompress, isCompressed, writtenMethod, zstdMissing } from '../../../src/service/repository/compression.js';
import { decodeValue, encodeValue, keyLayout, tenantKeyspace, useKeyLayout } from '../../../src/store/keyspace.js';
import { auth, checkpointBody, useTestApp } from '../../support/app.js';

const ZSTD = 2;
const DEFLATE = 1;

describe('compress and decompress', () => {
  it('write zstd (method 2) in a store of the task layout, where the library loads here', () => {
    expect(zstdMissing()).toBeUndefined();
    expect(keyLayout()).toBe('task');
    expect(writtenMethod()).toBe(ZSTD);
    expect(compress(Buffer.from('word '.repeat(400)))[2]).toBe(ZSTD);
  });

  it('write DEFLATE (method 1) in a store that keeps the spaces layout, which a release of format 8 reads', () => {
    useKeyLayout('spaces');
    try {
      expect(writtenMethod()).toBe(DEFLATE);
      expect(compress(Buffer.from('word '.repeat(400)))[2]).toBe(DEFLATE);
    } finally {
      useKeyLayout('task');
    }
  });

  it.each([
    ['zstd', ZSTD],
    ['DEFLATE', DEFLATE],
  ])('give back every value byte for byte (%s)', (_, method) => {
    // What is compressed is MessagePack or a sealed value, neither of which starts 0xC1 0x00, the mark of a compressed one (`compression.ts`).
    const value = fc
      .oneof(fc.uint8Array({ maxLength: 4096 }), fc.string({ maxLength: 3000 }).map((text) => new TextEncoder().encode(text.repeat(3))))
      .filter((array) => !(array[0] === 0xc1 && array[1] === 0x00));
    fc.assert(
      fc.property(value, (array) => {
        const bytes = Buffer.from(array);
        const packed = compress(bytes, method);
        expect(packed.length).toBeLessThanOrEqual(bytes.length);
        if (isCompressed(packed)) expect(packed[2]).toBe(method);
        expect(decompress(packed).equals(bytes)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ['zstd', ZSTD],
    ['DEFLATE', DEFLATE],
  ])('give back a long run of one byte, which zstd shrinks past DEFLATE’s bound of 1,032 times (%s)', (_, method) => {
    for (const length of [100_000, 1_000_000, 4_000_000]) {
      const run = Buffer.alloc(length, 'a');
      const packed = compress(run, method);
      expect(packed[2]).toBe(method);
      expect(decompress(packed).equals(run)).toBe(true);
    }
    // A claim beyond what the method can expand to is refused before any buffer is made for it.
    const packed = compress(Buffer.alloc(100_000, 'a'), method);
    const claim = Buffer.from(packed);
    claim.writeUInt32LE((packed.length - 7) * (method === ZSTD ? 32_768 : 1032) + 17, 3);
    expect(() => decompress(claim)).toThrow(CompressionError);
  });

  it('leave short and incompressible values as they are', () => {
    const short = Buffer.from('{"a":1}');
    expect(compress(short)).toBe(short);
    const random = randomBytes(2048);
    expect(compress(random)).toBe(random);
  });

  it.each([
    ['zstd', ZSTD],
    ['DEFLATE', DEFLATE],
  ])('shrink a checkpoint-like text to less than half and mark it (%s)', (_, method) => {
    const text = Buffer.from(JSON.stringify(checkpointBody('task-z', { labels: { team: 'storage' } })).repeat(4));
    const packed = compress(text, method);
    expect(isCompressed(packed)).toBe(true);
    expect(packed.length).toBeLessThan(text.length / 2);
  });

  it('write what the formats say: one zstd frame, or raw DEFLATE, each against the field-name dictionary', () => {
    const text = Buffer.from(JSON.stringify(checkpointBody('task-format', { contextSummary: { keyDecisions: ['the lease table keeps the epoch'] } })));
    const zstd = compress(text, ZSTD);
    expect(zstd.readUInt32LE(3)).toBe(text.length);
    // zstd's own reader needs the dictionary: a frame that decodes without it did not use it.
    expect(() => new Decompressor().decompress(zstd.subarray(7))).toThrow();
    const dictionary = Buffer.from(JSON.stringify({ agentId: '' }));
    expect(() => {
      const reader = new Decompressor();
      reader.loadDictionary(dictionary);
      return reader.decompress(zstd.subarray(7));
    }).toThrow();
    const deflate = compress(text, DEFLATE);
    expect(() => inflateRawSync(deflate.subarray(7), { windowBits: 12 })).toThrow();
  });

  it.each([
    ['zstd', ZSTD],
    ['DEFLATE', DEFLATE],
  ])('refuse a value that claims more than it can expand to, a length that does not hold either way, damaged data and an unknown method (%s)', (_, method) => {
    const packed = compress(Buffer.from('word '.repeat(400)), method);
    const claim = Buffer.from(packed);
    claim.writeUInt32LE(0x7fff_ffff, 3);
    expect(() => decompress(claim)).toThrow(CompressionError);
    const short = Buffer.from(packed);
    short.writeUInt32LE(packed.readUInt32LE(3) - 1, 3);
    expect(() => decompress(short)).toThrow(CompressionError);
    const long = Buffer.from(packed);
    long.writeUInt32LE(packed.readUInt32LE(3) + 1, 3);
    expect(() => decompress(long)).toThrow(CompressionError);
    const cut = packed.subarray(0, packed.length - 3);
    expect(() => decompress(cut)).toThrow(CompressionError);
    const unknown = Buffer.from(packed);
    unknown[2] = 9;
    expect(() => decompress(unknown)).toThrow(/method 9/);
  });
});

describe('checkpoint records on disk', () => {
  const testApp = useTestApp();
  const key = (taskId: string, id: string) => tenantKeyspace('default').checkpoints.pack(taskId, id, 0);

  it('read back when they hold a long run of one character (zstd shrinks it thousands of times)', async () => {
    const { app, store } = testApp();
    // The longest texts a checkpoint takes (a continuation prompt of 500,000 characters, rollback instructions of 100,000):
    // the record shrinks past DEFLATE's bound of 1,032 times.
    const body = checkpointBody('task-run', { recovery: { continuationPrompt: '='.repeat(500_000), rollbackInstructions: '='.repeat(100_000) } });
    const res = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: body });
    expect(res.statusCode).toBe(201);
    const created = res.json() as { id: string; taskId: string };
    const stored = await store.transact(async (tx) => Buffer.from((await tx.get(key(created.taskId, created.id)))!), { readOnly: true });
    expect(stored.readUInt32LE(3) / (stored.length - 7)).toBeGreaterThan(1032);
    const read = await app.inject({ method: 'GET', url: `/v1/checkpoints/${created.id}`, headers: auth() });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(created);
  });

  it('are compressed with zstd, and one written with DEFLATE or uncompressed by an earlier release still reads (every read verifies the hash)', async () => {
    const { app, store } = testApp();
    const body = checkpointBody('task-packed', { contextSummary: { keyDecisions: ['the parser stays hand-written because the grammar is small'] } });
    const res = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: body });
    expect(res.statusCode).toBe(201);
    const created = res.json() as { id: string; taskId: string };
    const stored = await store.transact(async (tx) => Buffer.from((await tx.get(key(created.taskId, created.id)))!), { readOnly: true });
    expect(isCompressed(stored)).toBe(true);
    expect(stored[2]).toBe(ZSTD);
    const record = decodeValue<{ c: string }>(decompress(stored));
    expect(stored.length).toBeLessThan(Buffer.byteLength(record.c));

    for (const earlier of [compress(encodeValue(record), DEFLATE), encodeValue(record)]) {
      await store.transact(async (tx) => {
        tx.set(key(created.taskId, created.id), earlier);
      });
      const read = await app.inject({ method: 'GET', url: `/v1/checkpoints/${created.id}`, headers: auth() });
      expect(read.statusCode).toBe(200);
      expect(read.json()).toEqual(created);
    }
  });
});
