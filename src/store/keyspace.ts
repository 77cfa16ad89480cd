/**
 * The key layout, defined once and shared by every store. Keys are
 * FoundationDB tuples (`fdb-tuple`) under the root subspace
 * `("baton", tenant)`; values are MessagePack. Records larger than
 * {@link CHUNK_BYTES} are split over numbered keys, as the FoundationDB Record
 * Layer does. `docs/keyspace.md` shows the same table for readers.
 *
 * @module
 */
import { Packr, type Options } from 'msgpackr';
import * as tuple from 'fdb-tuple';
import type { Bytes, Transaction } from './store.js';
import { prefixEnd, StoreError } from './store.js';

/** One element of a tuple key. */
export type KeyPart = string | number | bigint | boolean | null | Buffer;

/**
 * The top-level prefixes under a tenant's root, one per kind of record. The
 * short names keep keys small; `docs/keyspace.md` gives each one's full form.
 */
export const SPACES = {
  /** `(taskId, checkpointId)` → current version of a checkpoint (split record). */
  checkpoints: 'cp',
  /** `(checkpointId, version)` → an earlier version, immutable (split record). */
  revisions: 'rev',
  /** `(checkpointId)` → taskId, to find a checkpoint by id alone. */
  ids: 'id',
  /** `(taskId)` → task head: latest id, sequence, counters, breaker state. */
  tasks: 'task',
  /** `(taskId, seq)` → checkpoint id, the task's history in write order. */
  history: 'hist',
  /** `(name, value, createdAt, checkpointId)` → taskId; secondary indexes. */
  index: 'ix',
  /** `(word, taskId, startAt, startId)` → the run's last `[createdAt, id]`, or `[]` while open; the full-text index (`q`). */
  terms: 'tr',
  /** `(taskId, startAt, startId, word)` → where a run of `terms` whose value says open ended (store format 6): a merge writes a checkpoint's ends beside each other, under its task. */
  runEnds: 'tc',
  /** `(taskId, startAt, startId)` → the words whose runs start there: each task's runs, for a purge and a re-blinding pass. */
  taskTerms: 'tt',
  /** `(taskId)` → the words of the task's newest merged checkpoint, whose runs are open. */
  openTerms: 'to',
  /** `(taskId, createdAt, checkpointId)` → the previous position and the words of a checkpoint not yet merged into the runs, as format 4 wrote them; read and merged, no longer written (`pending-terms.ts`). */
  pendingTerms: 'tp',
  /** `(createdAt, checkpointId, taskId)` → the same, in the order checkpoints were made: the pending list from format 5 on (`pending-terms.ts`). */
  pendingList: 'tq',
  /** `(parentId, childId)` → empty; `parents (childId)` → parentId. */
  links: 'lnk',
  parents: 'par',
  /** `(taskId, seq)` → audit entry, hash-chained per task. */
  audit: 'aud',
  /** `(stamp)` → CloudEvent, ordered by commit stamp (the outbox). */
  events: 'ev',
  /** `(id)` → protocol records: handoffs, recoveries, leases. */
  handoffs: 'hof',
  recoveries: 'rcv',
  leases: 'lease',
  /** `(key)` → the first response of an idempotent request. */
  idempotency: 'idem',
  /** `(operationId)` → the recorded result of an operation applied once. */
  operations: 'op',
  /** `(name)` → counters and other small state of the tenant. */
  meta: 'meta',
  /** `(operationId)` → a queued write that could no longer apply when replayed. */
  deadLetters: 'dead',
  /**
   * `(taskId, tag, ...)`: a task's own rows side by side (store format 9, the
   * `task` layout, {@link KeyLayout}): its records, audit entries, history and
   * head, so that a create's rows share the task's pages.
   */
  taskLocal: 'tk',
  /** `(taskId)` → empty; every task, written with its first head, listed in id order (the `task` layout). */
  taskList: 'tl',
} as const;

/**
 * Where a task's own rows are. `task` (store format 9, every store created
 * since): under `("tk", taskId, tag)`, {@link TASK_TAGS}. `spaces` (a store
 * written before): each kind in its own space, `("cp", taskId, …)`,
 * `("aud", taskId, …)`, `("hist", taskId, …)`, `("task", taskId)`. A store
 * keeps the layout it was created with (`src/service/repository/key-layout.ts`).
 */
export type KeyLayout = 'task' | 'spaces';

/**
 * The tag after the task id of each task-local space, in the `task` layout.
 * In key order: the audit entries, the records, then the small rows (history,
 * the `task` index's entries, {@link TASK_INDEX_TAG}, and the head) together
 * at the end of the task's range, where a create's writes land.
 */
export const TASK_TAGS = { audit: 'a', checkpoints: 'c', history: 'h', tasks: 't' } as const;

type TaskSpaceName = keyof typeof TASK_TAGS;

/** The tag of a task's `task` index entries in the `task` layout ({@link IndexSpace}), after its history. */
export const TASK_INDEX_TAG = 'i';

export type SpaceName = keyof typeof SPACES;

/** A prefix of tuple keys; every key it makes starts with its bytes. */
export class Subspace {
  readonly prefix: Bytes;

  constructor(prefix: Bytes) {
    this.prefix = prefix;
  }

  /** The key of `parts` inside this subspace. */
  pack(...parts: KeyPart[]): Bytes {
    return packAfter(this.prefix, parts);
  }

  /** The tuple parts of a key made by {@link pack}, without this prefix. */
  unpack(key: Bytes): KeyPart[] {
    if (!this.contains(key)) throw new RangeError('The key is outside this subspace.');
    // Most keys hold strings only (ids, times, words): read as such without fdb-tuple's buffers; any other part, by it.
    return unpackStrings(key, this.prefix.length) ?? (tuple.unpack(key.subarray(this.prefix.length)) as KeyPart[]);
  }

  contains(key: Bytes): boolean {
    return key.length >= this.prefix.length && key.subarray(0, this.prefix.length).equals(this.prefix);
  }

  /** A child subspace: the keys that start with `parts`. */
  at(...parts: KeyPart[]): Subspace {
    return new Subspace(this.pack(...parts));
  }

  /** The `[begin, end)` range of every key strictly inside `parts` (not `parts` itself). */
  range(...parts: KeyPart[]): { begin: Bytes; end: Bytes } {
    const base = this.pack(...parts);
    return { begin: Buffer.concat([base, ZERO]), end: Buffer.concat([base, FF]) };
  }
}

/** `prefix ‖ parts` packed as a tuple, in one buffer when every part is a string. */
function packAfter(prefix: Bytes, parts: KeyPart[]): Bytes {
  if (parts.length === 0) return prefix;
  // Strings only, none holding U+0000 (nearly every key): one buffer, each part written into it once.
  let length = prefix.length;
  for (const part of parts) {
    if (typeof part !== 'string' || part.indexOf('\u0000') >= 0) return packParts(prefix, parts);
    length += Buffer.byteLength(part, 'utf8') + 2;
  }
  const out = Buffer.allocUnsafe(length);
  prefix.copy(out, 0);
  let at = prefix.length;
  for (const part of parts as string[]) at = writePlainString(out, at, part);
  return out;
}

/** {@link packAfter} part by part, any kind of part. */
function packParts(prefix: Bytes, parts: KeyPart[]): Bytes {
  const pieces: Buffer[] = [prefix];
  for (const part of parts) pieces.push(typeof part === 'string' ? packString(part) : tuple.pack([part as tuple.TupleItem]));
  return Buffer.concat(pieces);
}

/**
 * One kind of a task's rows in the `task` layout: the key of `(taskId,
 * ...rest)` is `("tk", taskId, tag, ...rest)`, so a task's kinds sit side by
 * side under its id. Every key names its task: there is no range across
 * tasks (list them through `taskList`).
 */
export class TaskSpace extends Subspace {
  private readonly tag: Bytes;

  constructor(
    taskLocal: Subspace,
    private readonly tagName: string,
  ) {
    super(taskLocal.prefix);
    this.tag = packString(tagName);
  }

  override pack(...parts: KeyPart[]): Bytes {
    const taskId = parts[0];
    if (typeof taskId !== 'string') throw new RangeError('A task-local key starts with its task id.');
    // Strings only, none holding U+0000 (a record's or a head's key): one buffer, as `Subspace.pack` makes it.
    let length = this.prefix.length + this.tag.length;
    for (const part of parts) {
      if (typeof part !== 'string' || part.indexOf('\u0000') >= 0) {
        const head = packStringBetween(this.prefix, taskId, this.tag);
        return parts.length === 1 ? head : packAfter(head, parts.slice(1));
      }
      length += Buffer.byteLength(part, 'utf8') + 2;
    }
    const out = Buffer.allocUnsafe(length);
    this.prefix.copy(out, 0);
    let at = writePlainString(out, this.prefix.length, taskId);
    at += this.tag.copy(out, at);
    for (let i = 1; i < parts.length; i++) at = writePlainString(out, at, parts[i] as string);
    return out;
  }

  override unpack(key: Bytes): KeyPart[] {
    if (!this.contains(key)) throw new RangeError('The key is outside this subspace.');
    const [taskId, , ...rest] = tuple.unpack(key.subarray(this.prefix.length)) as KeyPart[];
    return [taskId!, ...rest];
  }

  override contains(key: Bytes): boolean {
    if (!super.contains(key)) return false;
    const end = packedStringEnd(key, this.prefix.length);
    return end > 0 && key.length >= end + this.tag.length && key.subarray(end, end + this.tag.length).equals(this.tag);
  }

  override range(...parts: KeyPart[]): { begin: Bytes; end: Bytes } {
    if (parts.length === 0) throw new RangeError('A task-local space has no range across tasks.');
    return super.range(...parts);
  }

  /** A key of `(taskId, ...rest)` is `prefix ‖ taskId ‖ infix ‖ rest`, each packed. */
  frame(): { prefix: Bytes; infix: Bytes } {
    return { prefix: this.prefix, infix: this.tag };
  }
}

/**
 * The secondary indexes `("ix", name, value, createdAt, checkpointId)`; in the
 * `task` layout the `task` index's entries are the task's own rows instead,
 * `("tk", taskId, "i", createdAt, checkpointId)`, beside its records. Packs,
 * ranges and unpacks `(name, value, …)` either way.
 */
export class IndexSpace extends Subspace {
  constructor(
    index: Subspace,
    private readonly taskIndex: TaskSpace,
  ) {
    super(index.prefix);
  }

  override pack(...parts: KeyPart[]): Bytes {
    return parts[0] === 'task' && parts.length >= 2 ? this.taskIndex.pack(...parts.slice(1)) : super.pack(...parts);
  }

  override range(...parts: KeyPart[]): { begin: Bytes; end: Bytes } {
    return parts[0] === 'task' && parts.length >= 2 ? this.taskIndex.range(...parts.slice(1)) : super.range(...parts);
  }

  override unpack(key: Bytes): KeyPart[] {
    return this.taskIndex.contains(key) ? ['task', ...this.taskIndex.unpack(key)] : super.unpack(key);
  }

  override contains(key: Bytes): boolean {
    return super.contains(key) || this.taskIndex.contains(key);
  }

  /** An entry of `name` is `prefix ‖ value ‖ infix ‖ (createdAt, checkpointId)`, each packed. */
  frame(name: string): { prefix: Bytes; infix: Bytes } {
    return name === 'task' ? this.taskIndex.frame() : { prefix: super.pack(name), infix: EMPTY };
  }
}

/** Where the packed string at `at` ends (the offset after its 0x00), or -1 when none starts there or it runs off the key. */
function packedStringEnd(key: Buffer, at: number): number {
  if (key[at] !== STRING_CODE) return -1;
  for (let i = at + 1; i < key.length; i++) {
    if (key[i] !== 0x00) continue;
    if (key[i + 1] === 0xff) i += 1;
    else return i + 1;
  }
  return -1;
}

const ZERO = Buffer.from([0x00]);
const FF = Buffer.from([0xff]);
const STRING_CODE = 0x02;

/**
 * The tuple encoding of one string, exactly as fdb-tuple makes it (type code
 * 0x02, UTF-8, 0x00 escaped as 0x00 0xFF, then 0x00). Keys are packed on every
 * request and most parts are strings; this path is several times faster than
 * the general one, and a test holds the two equal. A tuple's encoding is the
 * concatenation of its parts' encodings, so parts can be packed one by one.
 */
export function packString(value: string): Buffer {
  return packStringBetween(EMPTY, value, EMPTY);
}

const EMPTY = Buffer.alloc(0);

/**
 * `prefix ‖ packString(value) ‖ suffix` in one buffer, written once: an index
 * key is a packed prefix, one packed string and a packed suffix, and a write
 * may build a hundred of them.
 */
export function packStringBetween(prefix: Buffer, value: string, suffix: Buffer): Buffer {
  // A string without U+0000 has no 0x00 byte in UTF-8: nothing to escape.
  if (value.indexOf('\u0000') < 0) {
    const out = Buffer.allocUnsafe(prefix.length + Buffer.byteLength(value, 'utf8') + 2 + suffix.length);
    prefix.copy(out, 0);
    suffix.copy(out, writePlainString(out, prefix.length, value));
    return out;
  }
  return Buffer.concat([prefix, packEscaped(value), suffix]);
}

/**
 * Writes the tuple encoding of `value`, a string without U+0000 (so no byte
 * to escape), into `out` at `at`; the offset after it. `out` has the room.
 */
function writePlainString(out: Buffer, at: number, value: string): number {
  out[at] = STRING_CODE;
  const end = at + 1 + out.write(value, at + 1, 'utf8');
  out[end] = 0x00;
  return end + 1;
}

/**
 * The strings of a key made of packed strings only, from `offset` on (after
 * a subspace's prefix), exactly as fdb-tuple unpacks them; undefined when a
 * part is not a string. A search reads a thousand such keys at a time, and
 * this is several times faster than the general unpack; a test holds the two
 * equal.
 */
export function unpackStrings(key: Buffer, offset: number): string[] | undefined {
  const parts: string[] = [];
  let at = offset;
  while (at < key.length) {
    const end = packedStringEnd(key, at);
    if (end < 0) return undefined;
    // Without its type code and its terminating 0x00; a 0x00 inside is an escaped one (0x00 0xFF).
    const bytes = key.subarray(at + 1, end - 1);
    parts.push(bytes.includes(0x00) ? unescapeZeros(bytes) : bytes.toString('utf8'));
    at = end;
  }
  return parts;
}

function unescapeZeros(bytes: Buffer): string {
  const out = Buffer.allocUnsafe(bytes.length);
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    out[length++] = bytes[i]!;
    if (bytes[i] === 0x00) i += 1;
  }
  return out.subarray(0, length).toString('utf8');
}

function packEscaped(value: string): Buffer {
  const utf8 = Buffer.from(value, 'utf8');
  let zeros = 0;
  for (let i = 0; i < utf8.length; i++) if (utf8[i] === 0) zeros++;
  const out = Buffer.allocUnsafe(utf8.length + zeros + 2);
  out[0] = STRING_CODE;
  if (zeros === 0) utf8.copy(out, 1);
  else {
    let at = 1;
    for (let i = 0; i < utf8.length; i++) {
      out[at++] = utf8[i]!;
      if (utf8[i] === 0) out[at++] = 0xff;
    }
  }
  out[out.length - 1] = 0x00;
  return out;
}
/** The tuple encodings of the integers 0 and 1 as one more key part. */
const ONE_PART_ZERO = tuple.pack([0]);
const ONE_PART_ONE = tuple.pack([1]);

/** The layout of the store this process serves; `unknown` while it could not be read (the store was down when the process started). */
let layout: KeyLayout | 'unknown' = 'task';

/**
 * The layout of the store this process serves (`src/service/repository/key-layout.ts`
 * reads it when the service starts; a store a process opens without the
 * service, a new one, is in the `task` layout).
 */
export function keyLayout(): KeyLayout | 'unknown' {
  return layout;
}

/** Sets the layout keys are packed in from now on (one store a process, whose layout `key-layout.ts` read). */
export function useKeyLayout(next: KeyLayout | 'unknown'): void {
  layout = next;
}

/** What packing a task's key answers while the store's layout is not known: the store is unavailable, for now. */
export function unknownLayout(): StoreError {
  return new StoreError('unavailable', 'The store could not be read when this instance started, so where its tasks are is not known yet; it is read again every second until the store answers.');
}

/**
 * The root subspace `("baton", tenant)` and its named children, in `keys`'
 * layout (the store's, by default). While it is `unknown` every space
 * packs as usual but a task's own (and the `task` index's), which throw
 * {@link unknownLayout}.
 */
export function tenantKeyspace(tenant: string, keys: KeyLayout | 'unknown' = layout): Record<SpaceName, Subspace> & { root: Subspace; layout: KeyLayout | 'unknown' } {
  const root = new Subspace(tuple.pack(['baton', tenant]));
  const spaces = Object.fromEntries(
    Object.entries(SPACES).map(([name, short]) => [name, root.at(short)]),
  ) as Record<SpaceName, Subspace>;
  if (keys !== 'spaces') {
    const local = (tag: string): TaskSpace => (keys === 'task' ? new TaskSpace(spaces.taskLocal, tag) : new UnknownTaskSpace(spaces.taskLocal, tag));
    for (const [name, tag] of Object.entries(TASK_TAGS)) spaces[name as TaskSpaceName] = local(tag);
    spaces.index = new IndexSpace(spaces.index, local(TASK_INDEX_TAG));
  }
  return { root, layout: keys, ...spaces };
}

/** A task-local space while the store's layout is not known: every use throws {@link unknownLayout}. */
class UnknownTaskSpace extends TaskSpace {
  override pack(): Bytes {
    throw unknownLayout();
  }

  override unpack(): KeyPart[] {
    throw unknownLayout();
  }

  override contains(): boolean {
    throw unknownLayout();
  }

  override range(): { begin: Bytes; end: Bytes } {
    throw unknownLayout();
  }

  override frame(): { prefix: Bytes; infix: Bytes } {
    throw unknownLayout();
  }
}

/**
 * Spaces shared by every tenant, under the root `("baton-system")`: what a
 * background task must find across tenants without knowing them.
 */
export const SYSTEM_SPACES = {
  /** `(bucket, expiresAt, tenant, taskId, leaseId)` → empty; leases by expiry, for the sweeper. */
  leaseExpiry: 'lexp',
  /** `(bucket, recordedAt, tenant, operationId)` → empty; operation records by age, for their sweeper. */
  operationExpiry: 'opx',
  /** `(kind, tenant, taskId)` → the job; maintenance passes in progress (a paged purge), resumed by the runner after a crash. */
  maintenance: 'mnt',
  /** `(bucket, expiresAt, tenant, taskId)` → empty; tasks by the time their policy's `expireAfter` runs out, for the retention sweeper. */
  taskExpiry: 'texp',
  /** `(tenant)` → empty; every tenant that has written, for passes over each tenant's data (event retention). */
  tenants: 'tnt',
  /** `(keyId)` → empty; every encryption key the store's values may be sealed with, checked against the key file at start-up. */
  keys: 'key',
  /** `(instanceId)` → an instance's entry: the keys it seals with and the keys its queued writes need, so a re-seal retires none of them. */
  instances: 'ins',
  /** `(keyId)` → a public key that signed something (a finalization, an evidence bundle), listed by `GET /v1/keys` on every instance. */
  signingKeys: 'sig',
  /** `(tenant)` → empty; a tenant whose full-text pending list may hold checkpoints, for the indexer. */
  termsDue: 'tdq',
  /** `(tenant)` → a little-endian count of the tenant's full-text pending entries, kept where other processes write the store: every instance's creates wait on it. */
  termsPending: 'tpn',
  /** `()` → the settings that remove data (default keepLast, expiry, retention; event and operation retention), shared by every instance. */
  settings: 'set',
  /** `(duty)` → the lease of a maintenance duty (lease sweep, operation sweep, maintenance, indexer): its holder and until when, so one instance does it at a time. */
  duties: 'duty',
  /** `()` → the re-seal pass (`baton rekey`): who runs it, its progress and heartbeat, so every instance reports the same pass and only one runs. */
  rekey: 'rk',
  /** `()` → `{ layout }`: where a task's rows are ({@link KeyLayout}), written when the store is first opened (`src/service/repository/key-layout.ts`). */
  layout: 'lay',
} as const;

let system: Readonly<Record<keyof typeof SYSTEM_SPACES, Subspace>> | undefined;

export function systemKeyspace(): Readonly<Record<keyof typeof SYSTEM_SPACES, Subspace>> {
  // Made once: a create asks for it (the full-text due mark), and making it packed every prefix again.
  if (system === undefined) {
    const root = new Subspace(tuple.pack(['baton-system']));
    system = Object.freeze(Object.fromEntries(Object.entries(SYSTEM_SPACES).map(([name, short]) => [name, root.at(short)])) as Record<keyof typeof SYSTEM_SPACES, Subspace>);
  }
  return system;
}

/** The tuple type code that marks a 12-byte versionstamp. */
const VERSIONSTAMP_CODE = 0x33;

/**
 * Writes `value` at `subspace ‖ (versionstamp, ...suffix)`, so the key unpacks
 * as a tuple whose first part is a `{ type: 'versionstamp' }`. `order` tells
 * apart several stamped keys written by one transaction (the last 2 bytes of
 * the 12-byte tuple versionstamp).
 */
export function setStampedTuple(
  tx: Transaction,
  subspace: Subspace,
  order: number,
  suffix: KeyPart[],
  value: Bytes,
): void {
  const userVersion = Buffer.alloc(2);
  userVersion.writeUInt16BE(order);
  const tail = suffix.length === 0 ? Buffer.alloc(0) : tuple.pack(suffix as tuple.TupleItem[]);
  tx.setStamped(Buffer.concat([subspace.prefix, Buffer.from([VERSIONSTAMP_CODE])]), Buffer.concat([userVersion, tail]), value);
}

/** msgpackr's `skipValues` (in its code since 1.10, not in its typings): keys whose value is listed are not written. */
const SKIP_UNDEFINED = { skipValues: [undefined] } as Options;

/**
 * MessagePack by msgpackr (the encoder lmdb itself uses), as plain maps and
 * arrays: no record structures, which would make values unreadable without
 * the structures kept beside them. Keys whose value is undefined are left
 * out, as JSON leaves them out; 64-bit integers read back as numbers, and
 * binary as copies, never views of the store's read buffer. It writes the
 * same bytes as @msgpack/msgpack, which wrote the values before, for the
 * values Baton stores, and reads theirs, at less than half the time.
 */
const packr = new Packr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number', copyBuffers: true, ...SKIP_UNDEFINED });

/** MessagePack, the encoding of every stored value. */
export function encodeValue(value: unknown): Bytes {
  return packr.pack(value);
}

export function decodeValue<T = unknown>(bytes: Bytes): T {
  return packr.unpack(bytes) as T;
}

/**
 * The largest chunk of a split record, below FoundationDB's 100,000-byte value
 * limit with room to spare.
 */
export const CHUNK_BYTES = 90_000;

/**
 * How a space's values become bytes and back (`service/repository/codec.ts`
 * holds one per space). `aad` is the value's identity, its key (a split
 * record's key without the chunk number): a codec that seals binds it, so a
 * value copied under another key does not open.
 */
export interface ValueCodec {
  encode(value: unknown, aad: Bytes): Bytes;
  decode(bytes: Bytes, aad: Bytes): unknown;
}

/** MessagePack, as it is: the store's own values (the header, jobs). */
export const MESSAGE_PACK: ValueCodec = { encode: (value) => encodeValue(value), decode: (bytes) => decodeValue(bytes) };

/**
 * How a record was found stored: whole, in one value at `(key, 0)`; split,
 * in chunks at `(key, 1)`, `(key, 2)`, …; or absent. A write told the shape
 * its transaction read needs no reads of its own to replace the record.
 */
export type RecordShape = 'whole' | 'split' | 'absent';

/**
 * Writes a record of any size at `key`: one chunk at `(key, 0)` when it fits,
 * else chunks at `(key, 1)`, `(key, 2)`, … Chunks of an earlier, larger
 * version are cleared, so a record that shrinks leaves nothing behind.
 * `shape`: how this transaction found the record ({@link readRecordShaped});
 * without it the write reads the record's keys first. Answers the shape it
 * wrote, for a later write of the record in the same transaction.
 */
export async function writeRecord(tx: Transaction, subspace: Subspace, keyParts: KeyPart[], value: unknown, codec: ValueCodec = MESSAGE_PACK, shape?: RecordShape): Promise<RecordShape> {
  return writeRecordBytes(tx, subspace, keyParts, codec.encode(value, subspace.pack(...keyParts)), shape);
}

/** Writes a record's encoded bytes at `keyParts`, whole or split, as {@link writeRecord} does (a re-seal rewrites bytes it never decodes). */
export async function writeRecordBytes(tx: Transaction, subspace: Subspace, keyParts: KeyPart[], bytes: Bytes, shape?: RecordShape): Promise<RecordShape> {
  const base = subspace.pack(...keyParts);
  const whole = Buffer.concat([base, ONE_PART_ZERO]);
  const was = shape ?? (await shapeAt(tx, base, whole));
  if (was === 'split') tx.clearRange(Buffer.concat([base, ZERO]), Buffer.concat([base, FF]));
  if (bytes.length <= CHUNK_BYTES) {
    tx.set(whole, bytes);
    return 'whole';
  }
  if (was === 'whole') tx.clear(whole);
  let chunk = 1;
  for (let offset = 0; offset < bytes.length; offset += CHUNK_BYTES, chunk++) {
    tx.set(subspace.pack(...keyParts, chunk), bytes.subarray(offset, offset + CHUNK_BYTES));
  }
  return 'split';
}

/** Writes a record under a key that has never held one (a new id), skipping the reads. */
export function writeNewRecord(tx: Transaction, subspace: Subspace, keyParts: KeyPart[], value: unknown, codec: ValueCodec = MESSAGE_PACK): number {
  const base = subspace.pack(...keyParts);
  const bytes = codec.encode(value, base);
  if (bytes.length <= CHUNK_BYTES) {
    tx.set(Buffer.concat([base, ONE_PART_ZERO]), bytes);
    return bytes.length;
  }
  let chunk = 1;
  for (let offset = 0; offset < bytes.length; offset += CHUNK_BYTES, chunk++) {
    tx.set(subspace.pack(...keyParts, chunk), bytes.subarray(offset, offset + CHUNK_BYTES));
  }
  return bytes.length;
}

/** Reads a record written by {@link writeRecord}; `undefined` when absent. */
export async function readRecord<T = unknown>(
  tx: Transaction,
  subspace: Subspace,
  keyParts: KeyPart[],
  codec: ValueCodec = MESSAGE_PACK,
): Promise<T | undefined> {
  // The record's key without a chunk number: where its chunks are, and its identity for the codec.
  const base = subspace.pack(...keyParts);
  const { bytes } = await bytesAt(tx, base, false);
  return bytes === undefined ? undefined : (codec.decode(bytes, base) as T);
}

/**
 * Reads a record as {@link readRecord} does, and how it was stored, for a
 * write of it in the same transaction ({@link writeRecord}'s `shape`). Its
 * first two keys are read side by side, so a record that is absent (a new
 * task's head) costs one round trip over FoundationDB, not two; a record
 * found whole has read one key more than it needed.
 */
export async function readRecordShaped<T = unknown>(
  tx: Transaction,
  subspace: Subspace,
  keyParts: KeyPart[],
  codec: ValueCodec = MESSAGE_PACK,
): Promise<{ value: T | undefined; shape: RecordShape }> {
  const base = subspace.pack(...keyParts);
  const { bytes, shape } = await bytesAt(tx, base, true);
  return { value: bytes === undefined ? undefined : (codec.decode(bytes, base) as T), shape };
}

/** The stored bytes of a record, reassembled from its chunks. */
export async function readRecordBytes(tx: Transaction, subspace: Subspace, keyParts: KeyPart[]): Promise<Bytes | undefined> {
  return (await bytesAt(tx, subspace.pack(...keyParts), false)).bytes;
}

/**
 * The bytes of the record whose key, without a chunk number, is `base`, and
 * how they were stored; `together`: its chunk 1 is read beside its whole
 * value instead of after finding none.
 */
async function bytesAt(tx: Transaction, base: Bytes, together: boolean): Promise<{ bytes: Bytes | undefined; shape: RecordShape }> {
  const chunkOne = Buffer.concat([base, ONE_PART_ONE]);
  const firstChunk = together ? tx.get(chunkOne) : undefined;
  firstChunk?.catch(() => undefined);
  // Most records are whole: one point read finds them without a range read.
  const whole = await tx.get(Buffer.concat([base, ONE_PART_ZERO]));
  if (whole !== undefined) return { bytes: whole, shape: 'whole' };
  // Nor is a missing record (a new task's head) worth a range read: a split one always has chunk 1.
  const first = await (firstChunk ?? tx.get(chunkOne));
  if (first === undefined) return { bytes: undefined, shape: 'absent' };
  // Chunk 1 was just read in this transaction, so the range holds at least it.
  const chunks = await tx.getRange(chunkOne, Buffer.concat([base, FF]));
  return { bytes: Buffer.concat(chunks.map((c) => c.value)), shape: 'split' };
}

/** How the record at `base` is stored, by its first two keys. */
async function shapeAt(tx: Transaction, base: Bytes, whole: Bytes): Promise<RecordShape> {
  // Two point reads tell the common cases apart without a range read: a
  // record kept whole, or no record at all; only a split one needs clearing.
  if ((await tx.get(whole)) !== undefined) return 'whole';
  return (await tx.get(Buffer.concat([base, ONE_PART_ONE]))) !== undefined ? 'split' : 'absent';
}

/** Removes a record written by {@link writeRecord}, every chunk of it. */
export function clearRecord(tx: Transaction, subspace: Subspace, keyParts: KeyPart[]): void {
  const base = subspace.pack(...keyParts);
  tx.clearRange(Buffer.concat([base, ZERO]), Buffer.concat([base, FF]));
}

/** The range of every key that starts with `prefix`, for callers holding raw bytes. */
export function prefixRange(prefix: Bytes): { begin: Bytes; end: Bytes } {
  return { begin: prefix, end: prefixEnd(prefix) };
}
