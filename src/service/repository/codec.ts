/**
 * One value codec per keyspace space: how the values of each space become
 * bytes and back. Every repository file encodes and decodes through this
 * table, and nothing else of the service does, so the encoding of a space
 * changes here alone. Values are MessagePack; with encryption at rest, each
 * space that holds a tenant's data is sealed with the tenant's key and bound
 * to the value's key (`docs/encryption.md`). The spaces that hold only ids
 * (which every key holds anyway) stay plain. Keys are not values: the tuple
 * layer packs them (`store/keyspace.ts`), and the index blinds the words it
 * would put in them (`indexes.ts`).
 *
 * @module
 */
import { MissingKeyError, openPlain } from '../../crypto/keyring.js';
import { KeptValues } from './kept-values.js';
import { compress, compressOffThread, decompress } from './compression.js';
import type { BlindTable } from '../../crypto/blind-table.js';
import { decodeValue, encodeValue, type SPACES, type ValueCodec } from '../../store/keyspace.js';
import type { Bytes } from '../../store/store.js';

/** What seals one tenant's values and blinds its index words; absent when encryption at rest is off. */
export interface Sealing {
  seal(plain: Uint8Array, aad: Uint8Array): Buffer;
  /** The plain bytes: a value written before encryption was on as it is, a sealed one opened. */
  open(bytes: Uint8Array, aad: Uint8Array): Buffer;
  /** The keyed HMAC that stands for an index value in keys. */
  blind(value: string): string;
  /** The same HMACs of ASCII words, found by their bytes (a sealed create's pending entry, `entry-text.ts`); absent, words go through {@link blind}. */
  readonly words?: BlindTable;
}

/** The spaces whose values the repository writes (links and the task list hold empty values; `taskLocal` is the parent of the task-local spaces). */
type ValueSpace = Exclude<keyof typeof SPACES, 'links' | 'taskList' | 'taskLocal'>;

/** Whether a space's values hold a tenant's data (sealed) or only ids (plain). */
const SEALED: Readonly<Record<ValueSpace, boolean>> = {
  checkpoints: true,
  revisions: true,
  ids: false,
  tasks: true,
  history: false,
  index: false,
  terms: false,
  runEnds: false,
  taskTerms: false,
  openTerms: false,
  pendingTerms: false,
  pendingList: false,
  parents: false,
  audit: true,
  events: true,
  handoffs: true,
  recoveries: true,
  leases: true,
  meta: true,
  deadLetters: true,
  idempotency: true,
  operations: true,
};

/** The spaces whose values are checkpoint records, compressed before they are sealed (`compression.ts`). */
const COMPRESSED: ReadonlySet<ValueSpace> = new Set(['checkpoints', 'revisions']);

export type Codecs = Readonly<Record<ValueSpace, ValueCodec>>;

/** The spaces whose values are sealed, for a pass that re-seals them (`reseal.ts`). */
export const SEALED_SPACES: readonly ValueSpace[] = (Object.keys(SEALED) as ValueSpace[]).filter((space) => SEALED[space]);

/** MessagePack; a sealed value found without keys names its key ({@link MissingKeyError}). */
const PLAIN: ValueCodec = {
  encode: (value) => encodeValue(value),
  decode: (bytes) => decodeValue(openPlain(bytes)),
};

/** A checkpoint record's fields, as far as {@link compressAhead} checks them. */
interface RecordFields {
  c?: unknown;
  h?: unknown;
  s?: unknown;
}

/**
 * Where a record compressed before its transaction keeps those bytes, with
 * the fields they were made from: on the record object itself, under a
 * symbol and not enumerable, so MessagePack, JSON and spreads do not see it.
 * A `WeakMap` from record to bytes (as this was) sent each create's record,
 * text and bytes into V8's old generation: a long-lived weak map's entries
 * outlived the scavenges after their create (~0.5-1 MB more promoted a
 * scavenge, measured in `docs/performance.md`), so every create left work
 * for a mark-compact.
 */
const AHEAD: unique symbol = Symbol('compressed ahead');

interface Ahead {
  c: unknown;
  h: unknown;
  bytes: Buffer;
}

/**
 * Compresses a checkpoint record (`{ c, h }`) before the transaction that
 * writes it, on the compression thread (`compressOffThread`); the record
 * codecs then write these bytes instead of compressing again on this
 * thread. A record whose text or hash differs by then (or that carries a
 * signature, or that cannot take a property) is compressed when written, as ever.
 */
export async function compressAhead(record: RecordFields & object): Promise<void> {
  if (record.s !== undefined || !Object.isExtensible(record)) return;
  const { c, h } = record;
  const bytes = await compressOffThread(encodeValue(record));
  const ahead: Ahead = { c, h, bytes };
  if (Object.isExtensible(record)) Object.defineProperty(record, AHEAD, { value: ahead, configurable: true, writable: true });
}

/** A record's MessagePack, compressed: the bytes {@link compressAhead} made when its fields are still those. */
function recordBytes(value: unknown): Buffer {
  if (typeof value === 'object' && value !== null) {
    const ahead = (value as { [AHEAD]?: Ahead })[AHEAD];
    const fields = value as RecordFields;
    if (ahead !== undefined && fields.s === undefined && ahead.c === fields.c && ahead.h === fields.h) return ahead.bytes;
  }
  return compress(encodeValue(value));
}

/**
 * Records read lately, decoded, by key, with the stored bytes they were read
 * from, as a block cache holds blocks uncompressed: inflating a record was a
 * fifth of a history page. A read whose stored bytes equal the ones kept
 * takes the record kept (equal bytes decode to an equal record); the reader
 * still checks its hash against its text, as every read does. Bounded by
 * the bytes it holds; when full, a record kept goes at random
 * (`kept-values.ts`). Records are shared between reads: frozen. Records of
 * tenants sealed at rest are not kept.
 */
export class DecodedRecords {
  private readonly kept: KeptValues<{ bytes: Uint8Array; record: unknown }>;

  constructor(private readonly capacity: number) {
    this.kept = new KeptValues(capacity);
  }

  /** How many records are kept. */
  get count(): number {
    return this.kept.count;
  }

  read(bytes: Buffer, key: Bytes, decode: () => unknown): unknown {
    const id = Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');
    const kept = this.kept.get(id);
    if (kept !== undefined && bytes.equals(kept.bytes)) return kept.record;
    const record = decode();
    if (typeof record !== 'object' || record === null) return record;
    Object.freeze(record);
    const text = (record as RecordFields).c;
    const size = bytes.length + (typeof text === 'string' ? text.length : 0) + id.length;
    if (size > this.capacity / 64) return record;
    this.kept.set(id, { bytes: Uint8Array.from(bytes), record }, size);
    return record;
  }
}

/**
 * About 3,000 records of an agent's 4 KB text with their stored bytes
 * (~5.4 KB each): the latest checkpoints of a few thousand agents, which
 * they and their orchestrators read back.
 */
const DECODED = new DecodedRecords(16 * 1024 * 1024);

/** A record as MessagePack, compressed; one written uncompressed (by an earlier release) reads as it is. */
const PLAIN_RECORD: ValueCodec = {
  encode: (value) => recordBytes(value),
  decode: (bytes, key) => DECODED.read(bytes, key, () => decodePlain(openPlain(bytes))),
};

const PLAIN_CODECS: Codecs = codecTable((space) => (COMPRESSED.has(space) ? PLAIN_RECORD : PLAIN));
const sealedCodecs = new WeakMap<Sealing, Codecs>();

/** The codec of every space for a tenant sealed by `sealing` (plain when absent). */
export function codecsFor(sealing: Sealing | undefined): Codecs {
  if (sealing === undefined) return PLAIN_CODECS;
  let codecs = sealedCodecs.get(sealing);
  if (codecs === undefined) {
    const sealed: ValueCodec = {
      encode: (value, aad) => sealing.seal(encodeValue(value), aad),
      decode: (bytes, aad) => decodeValue(sealing.open(bytes, aad)),
    };
    const sealedRecord: ValueCodec = {
      encode: (value, aad) => sealing.seal(recordBytes(value), aad),
      // Not kept decoded: a tenant sealed at rest has its plaintext in memory only while a request needs it.
      decode: (bytes, aad) => decodePlain(sealing.open(bytes, aad)),
    };
    codecs = codecTable((space) => (COMPRESSED.has(space) ? sealedRecord : SEALED[space] ? sealed : PLAIN));
    sealedCodecs.set(sealing, codecs);
  }
  return codecs;
}

function codecTable(pick: (space: ValueSpace) => ValueCodec): Codecs {
  return Object.fromEntries((Object.keys(SEALED) as ValueSpace[]).map((space) => [space, pick(space)])) as Record<ValueSpace, ValueCodec>;
}

/** A value's MessagePack reading once it is open (plain or unsealed), decompressed when it was compressed. */
export function decodePlain<T = unknown>(bytes: Buffer): T {
  const plain = decompress(bytes);
  return (decodeRecord(plain) ?? decodeValue<T>(plain)) as T;
}

/**
 * A checkpoint record as the record codecs write it, `{ c, h }` (two
 * strings, in that order), read without the general decoder: a history page
 * reads a hundred, and the decoder's per-value work was a twelfth of the
 * page. Anything else (a signed record, another shape) is left to the
 * general decoder; so is a value this reading does not fully account for.
 */
export function decodeRecord(bytes: Buffer): { c: string; h: string } | undefined {
  if (bytes.length < 6 || bytes[0] !== 0x82 || bytes[1] !== 0xa1 || bytes[2] !== 0x63) return undefined;
  const c = readString(bytes, 3);
  if (c === undefined || bytes[c.end] !== 0xa1 || bytes[c.end + 1] !== 0x68) return undefined;
  const h = readString(bytes, c.end + 2);
  if (h === undefined || h.end !== bytes.length) return undefined;
  return { c: c.text, h: h.text };
}

/** A MessagePack string at `at` (fixstr, str 8, 16 or 32), and where it ends; undefined for anything else. */
function readString(bytes: Buffer, at: number): { text: string; end: number } | undefined {
  const span = stringSpan(bytes, at);
  if (span === undefined) return undefined;
  const { start, end } = span;
  const text = bytes.toString('utf8', start, end);
  // Bytes that are not UTF-8 are refused, as the general decoder's reading would not match them either.
  if (Buffer.byteLength(text) !== end - start) return undefined;
  return { text, end };
}

/** Where the bytes of a MessagePack string at `at` (fixstr, str 8, 16 or 32) start and end; undefined for anything else, or one cut short. */
export function stringSpan(bytes: Buffer, at: number): { start: number; end: number } | undefined {
  const head = bytes[at];
  let start: number;
  let length: number;
  if (head === undefined) return undefined;
  if (head >= 0xa0 && head <= 0xbf) [start, length] = [at + 1, head - 0xa0];
  else if (head === 0xd9 && at + 2 <= bytes.length) [start, length] = [at + 2, bytes[at + 1]!];
  else if (head === 0xda && at + 3 <= bytes.length) [start, length] = [at + 3, bytes.readUInt16BE(at + 1)];
  else if (head === 0xdb && at + 5 <= bytes.length) [start, length] = [at + 5, bytes.readUInt32BE(at + 1)];
  else return undefined;
  const end = start + length;
  return end > bytes.length ? undefined : { start, end };
}

/** The typed reading of `bytes` stored at `key`. */
export function decodeWith<T>(codec: ValueCodec, bytes: Uint8Array, key: Bytes): T {
  return codec.decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), key) as T;
}

/**
 * Lets a missing key through a catch that would call the value corrupt: a
 * value sealed with a key this instance lacks (another instance's newer key,
 * during a rolling key rotation) is whole, and the answer is 503 naming the
 * key (`transactions.ts`), never `checkpoint_corrupted` nor an audit entry.
 */
export function rethrowMissingKey(error: unknown): void {
  if (error instanceof MissingKeyError) throw error;
}
