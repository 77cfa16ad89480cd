/**
 * Checkpoint records are stored compressed (`compression.ts`): what is
 * written comes back byte for byte, a record written uncompressed by an
 * earlier release still reads, and a damaged value is refused, never
 * expanded into memory it claims.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compress, CompressionError, decompress, isCompressed } from '../../../src/service/repository/compression.js';
import { decodeValue, encodeValue, tenantKeyspace } from '../../../src/store/keyspace.js';
import { auth, checkpointBody, useTestApp } from '../../support/app.js';

describe('compress and decompress', () => {
  it('give back every value byte for byte', () => {
    // What is compressed is MessagePack or a sealed value, neither of which starts 0xC1 0x00, the mark of a compressed one (`compression.ts`).
    const value = fc
      .oneof(fc.uint8Array({ maxLength: 4096 }), fc.string({ maxLength: 3000 }).map((text) => new TextEncoder().encode(text.repeat(3))))
      .filter((array) => !(array[0] === 0xc1 && array[1] === 0x00));
    fc.assert(
      fc.property(value, (array) => {
        const bytes = Buffer.from(array);
        const packed = compress(bytes);
        expect(packed.length).toBeLessThanOrEqual(bytes.length);
        expect(decompress(packed).equals(bytes)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('leave short and incompressible values as they are', () => {
    const short = Buffer.from('{"a":1}');
    expect(compress(short)).toBe(short);
    const random = randomBytes(2048);
    expect(compress(random)).toBe(random);
  });

  it('shrink a checkpoint-like text to less than half and mark it', () => {
    const text = Buffer.from(JSON.stringify(checkpointBody('task-z', { labels: { team: 'storage' } })).repeat(4));
    const packed = compress(text);
    expect(isCompressed(packed)).toBe(true);
    expect(packed.length).toBeLessThan(text.length / 2);
  });

  it('refuse a value that claims more than DEFLATE can expand to, a length that does not hold, and an unknown method', () => {
    const packed = compress(Buffer.from('word '.repeat(400)));
    const claim = Buffer.from(packed);
    claim.writeUInt32LE(0x7fff_ffff, 3);
    expect(() => decompress(claim)).toThrow(CompressionError);
    const short = Buffer.from(packed);
    short.writeUInt32LE(packed.readUInt32LE(3) - 1, 3);
    expect(() => decompress(short)).toThrow(CompressionError);
    const unknown = Buffer.from(packed);
    unknown[2] = 9;
    expect(() => decompress(unknown)).toThrow(/method 9/);
  });
});

describe('checkpoint records on disk', () => {
  const testApp = useTestApp();
  const key = (taskId: string, id: string) => tenantKeyspace('default').checkpoints.pack(taskId, id, 0);

  it('are compressed, and one written uncompressed by an earlier release still reads (every read verifies the hash)', async () => {
    const { app, store } = testApp();
    const body = checkpointBody('task-packed', { contextSummary: { keyDecisions: ['the parser stays hand-written because the grammar is small'] } });
    const res = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: body });
    expect(res.statusCode).toBe(201);
    const created = res.json() as { id: string; taskId: string };
    const stored = await store.transact(async (tx) => Buffer.from((await tx.get(key(created.taskId, created.id)))!), { readOnly: true });
    expect(isCompressed(stored)).toBe(true);
    const record = decodeValue<{ c: string }>(decompress(stored));
    expect(stored.length).toBeLessThan(Buffer.byteLength(record.c));

    await store.transact(async (tx) => {
      tx.set(key(created.taskId, created.id), encodeValue(record));
    });
    const read = await app.inject({ method: 'GET', url: `/v1/checkpoints/${created.id}`, headers: auth() });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(created);
  });
});
