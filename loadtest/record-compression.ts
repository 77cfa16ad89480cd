/**
 * What each record compression method (`src/service/repository/compression.ts`)
 * costs and saves, on records as the service stores them: the canonical JSON
 * of a checkpoint and its hash, MessagePack, from `bench:http`'s evolving
 * bodies (an agent's ~4 KB text) and from `bench:scale`'s bodies (~2.5 KB).
 * In process, one thread, no server:
 *
 *   npx tsx loadtest/record-compression.ts
 *
 * For each kind of body and method: the mean stored size, and the mean time
 * to compress a record and to read one back (decompress), over
 * BENCH_RECORDS distinct records (default 3,000), the best of three passes;
 * beside them what a history page's miss also pays for each record (the
 * record's MessagePack read and its SHA-256), for scale. Nothing asserts.
 *
 * @module
 */
import { canonicalize } from '../src/domain/canonical-json.js';
import { sha256Hex } from '../src/domain/hash.js';
import { compress, decompress } from '../src/service/repository/compression.js';
import { decodeRecord } from '../src/service/repository/codec.js';
import { encodeValue } from '../src/store/keyspace.js';
import { EvolvingBodies } from './lib/http-payloads.js';
import { scaleBody } from './lib/scale-data.js';
import { alignedTable } from './lib/tables.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 3000);
const METHODS = [
  ['DEFLATE (method 1)', 1],
  ['zstd (method 2)', 2],
] as const;

/** A body as the service stores it: the server's fields added, canonical JSON and its hash as MessagePack. */
function recordOf(body: string, i: number): Buffer {
  const at = new Date(1_760_000_000_000 + i * 1000).toISOString();
  const checkpoint = { ...(JSON.parse(body) as object), id: `ckpt-${i}-0196a1b2c3d4e5f6a7b8c9d0`, version: 1, status: 'active', createdAt: at, updatedAt: at, schemaVersion: '1.0' };
  const c = canonicalize(checkpoint)!;
  return encodeValue({ c, h: sha256Hex(c) });
}

/** Mean µs of `run` over `count` calls, the best of three passes. */
function micros(count: number, run: (i: number) => unknown): number {
  let best = Infinity;
  for (let pass = 0; pass < 3; pass++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < count; i++) run(i);
    best = Math.min(best, Number(process.hrtime.bigint() - started) / 1000 / count);
  }
  return best;
}

const evolving = new EvolvingBodies();
const kinds = [
  ['evolving (bench:http)', Array.from({ length: RECORDS }, (_, i) => recordOf(evolving.next(`task-${i % 300}`, i), i))],
  ['scale (bench:scale)', Array.from({ length: RECORDS }, (_, i) => recordOf(scaleBody(i * 7919, 10_000), i))],
] as const;

const rows: string[][] = [];
for (const [kind, records] of kinds) {
  const plain = records.reduce((sum, record) => sum + record.length, 0) / records.length;
  const texts = records.map((record) => decodeRecord(record)!.c);
  rows.push([kind, 'MessagePack, uncompressed', plain.toFixed(0), '', '', `decode ${micros(records.length, (i) => decodeRecord(records[i]!)).toFixed(2)}, SHA-256 ${micros(records.length, (i) => sha256Hex(texts[i]!)).toFixed(2)}`]);
  for (const [name, method] of METHODS) {
    const stored = records.map((record) => compress(record, method));
    const size = stored.reduce((sum, value) => sum + value.length, 0) / stored.length;
    rows.push([
      kind,
      name,
      size.toFixed(0),
      micros(records.length, (i) => compress(records[i]!, method)).toFixed(2),
      micros(records.length, (i) => decompress(stored[i]!)).toFixed(2),
      '',
    ]);
  }
}
console.log(`${RECORDS} records of each kind, in process (best of three passes)\n`);
console.log(alignedTable(['bodies', 'method', 'bytes stored', 'compress µs', 'decompress µs', 'a miss also pays (µs)'], rows, 2));
