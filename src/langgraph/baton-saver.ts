/**
 * `BatonSaver`: a LangGraph.js checkpointer (`BaseCheckpointSaver`) that keeps
 * its checkpoints in Baton over HTTP, through the typed client. A thread is a
 * Baton task (`taskPrefix + thread_id`); each LangGraph checkpoint is one Baton
 * checkpoint, created with its parent link, labelled with its LangGraph id,
 * namespace, parent and searchable metadata, the serialized state in
 * `extensions.langgraph` (record.ts). Pending writes join their checkpoint
 * by a JSON Merge Patch with If-Match, so two writers never lose each other's.
 * docs/langgraph.md explains the mapping and its costs.
 *
 * @module
 */
import {
  BaseCheckpointSaver,
  TASKS,
  WRITES_IDX_MAP,
  copyCheckpoint,
  maxChannelVersion,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import type { RunnableConfig } from '@langchain/core/runnables';
import { BatonClient, BatonError, type BatonClientOptions } from '../client/index.js';
import type { Checkpoint as BatonCheckpoint, SearchQuery } from '../client/types.js';
import { EarlyWriteBook } from './early-writes.js';
import { EMPTY, LABEL, dump, labelsOf, load, metadataLabel, orderedWrites, recordOf, recordOrNot, where, writeKey, type LangGraphRecord, type StoredWrite } from './record.js';

export interface BatonSaverOptions {
  /** A client of your own, or the options to make one. */
  client?: BatonClient;
  clientOptions?: BatonClientOptions;
  /** The Baton agent id the checkpoints are written as; `list` without a thread searches this agent's checkpoints. */
  agentId?: string;
  /** Prepended to `thread_id` to make the task id, so LangGraph threads do not collide with other tasks. */
  taskPrefix?: string;
  serde?: SerializerProtocol;
}

/** Search results read per request. */
const PAGE = 100;
/** How often a pending write is tried again when another writer changed the checkpoint in between. */
const WRITE_ATTEMPTS = 20;
/** Checkpoints whose channel values are kept in memory; they never change once written. */
const CACHE_ENTRIES = 2_000;
/** How long writes wait for a checkpoint not written yet before it is looked up once more. */
const EARLY_WAIT_MS = 30_000;

export class BatonSaver extends BaseCheckpointSaver {
  readonly client: BatonClient;
  readonly agentId: string;
  readonly taskPrefix: string;
  /** Baton checkpoints by Baton id, as last read or written: the blobs and index in them never change. */
  private readonly docs = new Map<string, BatonCheckpoint>();
  /** Baton ids by `taskId \0 ns \0 LangGraph id`. */
  private readonly ids = new Map<string, string>();
  /** Pending writes to one checkpoint from this process, one after another. */
  private readonly writeChains = new Map<string, Promise<void>>();
  /** Writes waiting for a checkpoint whose put has not been sent yet. */
  private readonly early = new EarlyWriteBook();
  /** Creates in flight, by the same key as `ids`. */
  private readonly creating = new Map<string, Promise<unknown>>();

  constructor(options: BatonSaverOptions = {}) {
    super(options.serde);
    if (options.client === undefined && options.clientOptions === undefined) throw new TypeError('BatonSaver needs a client or clientOptions.');
    this.client = options.client ?? new BatonClient(options.clientOptions!);
    this.agentId = options.agentId ?? 'langgraph';
    this.taskPrefix = options.taskPrefix ?? 'langgraph:';
  }

  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const { threadId, ns } = where(config, 'put');
    const taskId = this.taskPrefix + threadId;
    const parentId = config.configurable?.checkpoint_id as string | undefined;
    const parent = parentId ? await this.find(taskId, ns, parentId) : undefined;
    const { channel_values: values, ...rest } = copyCheckpoint(checkpoint);
    const blobs: LangGraphRecord['blobs'] = {};
    const index: LangGraphRecord['index'] = {};
    for (const channel of Object.keys(newVersions)) {
      blobs[channel] = channel in values ? await dump(this.serde, values[channel]) : [EMPTY, ''];
      index[channel] = [null, newVersions[channel]!];
    }
    // A channel this checkpoint did not change keeps the value stored with an ancestor at the same version.
    const parentIndex = parent ? recordOf(parent).index : {};
    for (const [channel, version] of Object.entries(checkpoint.channel_versions)) {
      const ref = parentIndex[channel];
      if (index[channel] === undefined && ref !== undefined && ref[1] === version) index[channel] = [ref[0] ?? parent!.id, version];
    }
    const record: LangGraphRecord = { checkpoint: await dump(this.serde, { ...rest, channel_values: {} }), metadata: await dump(this.serde, metadata), blobs, index };
    const key = `${taskId}\0${ns}\0${checkpoint.id}`;
    const { claimed, writes } = this.early.claim(key);
    if (Object.keys(writes).length > 0) record.writes = writes;
    const creating = this.client.checkpoints.create({
      taskId,
      agentId: this.agentId,
      ...(parent ? { parentId: parent.id } : {}),
      labels: labelsOf(checkpoint.id, ns, parentId, metadata),
      extensions: { langgraph: record },
    });
    this.creating.set(key, creating);
    try {
      this.remember(await creating, ns, checkpoint.id);
      for (const early of claimed) early.settle();
    } catch (error) {
      for (const early of claimed) early.settle(error);
      throw error;
    } finally {
      this.creating.delete(key);
    }
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ''): Promise<void> {
    const { threadId, ns } = where(config, 'putWrites');
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    if (!checkpointId) throw new Error('putWrites needs configurable.checkpoint_id.');
    const batonTask = this.taskPrefix + threadId;
    const entries: [string, StoredWrite, boolean][] = [];
    for (const [i, [channel, value]] of writes.entries()) {
      const idx = (WRITES_IDX_MAP as Record<string, number>)[channel] ?? i;
      // Special writes (negative indexes) replace the earlier one; ordinary writes are kept as first written.
      entries.push([writeKey(taskId, idx), [taskId, channel, await dump(this.serde, value), taskPath], idx < 0]);
    }
    const key = `${batonTask}\0${ns}\0${checkpointId}`;
    const previous = this.writeChains.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.deliverWrites(key, batonTask, ns, checkpointId, entries));
    this.writeChains.set(key, next);
    try {
      await next;
    } finally {
      if (this.writeChains.get(key) === next) this.writeChains.delete(key);
    }
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined) return undefined;
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const taskId = this.taskPrefix + threadId;
    const checkpointId = (config.configurable?.checkpoint_id as string | undefined) || undefined;
    const doc = checkpointId ? await this.find(taskId, ns, checkpointId, true) : await this.first({ taskId, labels: { [LABEL.ns]: ns } }, () => true);
    return doc === undefined ? undefined : this.tupleOf(doc, threadId, ns);
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { before, filter } = options;
    let { limit } = options;
    const threadId = config.configurable?.thread_id as string | undefined;
    const ns = config.configurable?.checkpoint_ns as string | undefined;
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    const beforeId = before?.configurable?.checkpoint_id as string | undefined;
    const labels: Record<string, string> = {};
    if (checkpointId) labels[LABEL.id] = checkpointId;
    if (ns !== undefined) labels[LABEL.ns] = ns;
    for (const [key, value] of Object.entries(filter ?? {})) {
      const label = metadataLabel(key, value);
      if (label !== undefined) labels[label[0]] = String(label[1]);
    }
    const query: SearchQuery = { agentId: this.agentId, labels, limit: PAGE, ...(threadId !== undefined ? { taskId: this.taskPrefix + threadId } : {}) };
    for await (const doc of this.search(query)) {
      if (limit !== undefined && limit <= 0) return;
      if (!doc.taskId.startsWith(this.taskPrefix) || recordOrNot(doc) === undefined) continue;
      const id = String(doc.labels[LABEL.id]);
      if (beforeId !== undefined && id >= beforeId) continue;
      const tuple = await this.tupleOf(doc, doc.taskId.slice(this.taskPrefix.length), String(doc.labels[LABEL.ns]));
      // Labels narrow the search; the exact comparison is LangGraph's own.
      if (filter && !Object.entries(filter).every(([key, value]) => (tuple.metadata as Record<string, unknown>)?.[key] === value)) continue;
      if (limit !== undefined) limit -= 1;
      yield tuple;
    }
  }

  async deleteThread(threadId: string): Promise<void> {
    try {
      await this.client.tasks.purge(this.taskPrefix + threadId);
    } catch (error) {
      // A thread that was never written is already gone.
      if (!(error instanceof BatonError && error.status === 404)) throw error;
    }
    for (const key of this.ids.keys()) if (key.startsWith(`${this.taskPrefix + threadId}\0`)) this.ids.delete(key);
  }

  /** Stores writes with their checkpoint, waiting for its put when it is not written yet (early-writes.ts). */
  private async deliverWrites(key: string, taskId: string, ns: string, checkpointId: string, entries: [string, StoredWrite, boolean][]): Promise<void> {
    await this.creating.get(key)?.catch(() => undefined);
    if (this.ids.has(key)) return this.attachWrites(taskId, ns, checkpointId, entries);
    const early = this.early.add(key, entries);
    const found = await this.find(taskId, ns, checkpointId);
    if (found !== undefined && this.early.withdraw(key, early)) return this.attachWrites(taskId, ns, checkpointId, entries);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, EARLY_WAIT_MS);
    });
    try {
      await Promise.race([early.done, waited]);
    } finally {
      clearTimeout(timer);
    }
    if (!this.early.withdraw(key, early)) return early.done;
    return this.attachWrites(taskId, ns, checkpointId, entries);
  }

  /** Merges `entries` into the checkpoint's pending writes, reading again when another writer got there first. */
  private async attachWrites(taskId: string, ns: string, checkpointId: string, entries: [string, StoredWrite, boolean][]): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      const found = await this.find(taskId, ns, checkpointId);
      if (found === undefined) throw new Error('putWrites names a checkpoint that does not exist.');
      const current = await this.client.checkpoints.get(found.id);
      const existing = recordOf(current).writes ?? {};
      const added: Record<string, StoredWrite> = {};
      for (const [key, write, replace] of entries) if (replace || !(key in existing)) added[key] = write;
      if (Object.keys(added).length === 0) return;
      try {
        this.remember(await this.client.checkpoints.patch(current.id, { extensions: { langgraph: { writes: added } } }, { ifMatch: current.version }), ns, checkpointId);
        return;
      } catch (error) {
        if (!(error instanceof BatonError && error.code === 'version_conflict') || attempt + 1 >= WRITE_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * The Baton checkpoint of LangGraph checkpoint `checkpointId` in the thread's namespace `ns`.
   * The cached copy serves where only its immutable part (blobs, index) is read; `fresh` for its
   * pending writes, which another process may have added.
   */
  private async find(taskId: string, ns: string, checkpointId: string, fresh = false): Promise<BatonCheckpoint | undefined> {
    const known = fresh ? undefined : this.ids.get(`${taskId}\0${ns}\0${checkpointId}`);
    if (known !== undefined) {
      const doc = this.docs.get(known);
      if (doc !== undefined) return doc;
    }
    // The id label leads, so the search walks the index of that one id rather than the whole task.
    return this.first({ agentId: this.agentId, labels: { [LABEL.id]: checkpointId, [LABEL.ns]: ns } }, (doc) => doc.taskId === taskId);
  }

  private async first(query: SearchQuery, accept: (doc: BatonCheckpoint) => boolean): Promise<BatonCheckpoint | undefined> {
    for await (const doc of this.search({ ...query, limit: query.limit ?? 1 })) if (accept(doc) && recordOrNot(doc) !== undefined) return doc;
    return undefined;
  }

  /** Every match, newest first, page after page (a page may be empty when the server's read budget ran out first). */
  private async *search(query: SearchQuery): AsyncGenerator<BatonCheckpoint> {
    let cursor: string | undefined;
    do {
      const page = await this.client.checkpoints.search({ ...query, ...(cursor ? { cursor } : {}) });
      for (const doc of page.items) yield doc;
      cursor = page.nextCursor;
    } while (cursor);
  }

  private remember(doc: BatonCheckpoint, ns: string, checkpointId: string): void {
    this.ids.set(`${doc.taskId}\0${ns}\0${checkpointId}`, doc.id);
    this.docs.delete(doc.id);
    this.docs.set(doc.id, doc);
    if (this.docs.size > CACHE_ENTRIES) this.docs.delete(this.docs.keys().next().value!);
    if (this.ids.size > CACHE_ENTRIES) this.ids.delete(this.ids.keys().next().value!);
  }

  /** The LangGraph tuple of a Baton checkpoint: channel values gathered from where they were written, writes in order. */
  private async tupleOf(doc: BatonCheckpoint, threadId: string, ns: string): Promise<CheckpointTuple> {
    const record = recordOf(doc);
    const checkpoint = (await load(this.serde, record.checkpoint)) as Checkpoint;
    const values: Record<string, unknown> = {};
    for (const [channel, [holder]] of Object.entries(record.index)) {
      const blob = holder === null ? record.blobs[channel] : recordOf(await this.byId(holder)).blobs[channel];
      if (blob !== undefined && blob[0] !== EMPTY) values[channel] = await load(this.serde, blob);
    }
    checkpoint.channel_values = values;
    const parentId = doc.labels[LABEL.parent] as string | undefined;
    if (checkpoint.v < 4 && parentId !== undefined) await this.migratePendingSends(checkpoint, doc, ns, parentId);
    const pendingWrites: [string, string, unknown][] = [];
    for (const { write } of orderedWrites(record.writes ?? {})) pendingWrites.push([write[0], write[1], await load(this.serde, write[2])]);
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } },
      checkpoint,
      metadata: (await load(this.serde, record.metadata)) as CheckpointMetadata,
      pendingWrites,
    };
    if (parentId !== undefined) tuple.parentConfig = { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: parentId } };
    return tuple;
  }

  /** Checkpoints before format 4 kept pending sends as writes to their parent; LangGraph reads them as the TASKS channel. */
  private async migratePendingSends(checkpoint: Checkpoint, doc: BatonCheckpoint, ns: string, parentId: string): Promise<void> {
    const parent = await this.find(doc.taskId, ns, parentId, true);
    const writes = parent ? orderedWrites(recordOf(parent).writes ?? {}) : [];
    const sends: unknown[] = [];
    for (const { write } of writes) if (write[1] === TASKS) sends.push(await load(this.serde, write[2]));
    checkpoint.channel_values[TASKS] = sends;
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  private async byId(id: string): Promise<BatonCheckpoint> {
    const cached = this.docs.get(id);
    if (cached !== undefined) return cached;
    const doc = await this.client.checkpoints.get(id);
    this.docs.set(doc.id, doc);
    if (this.docs.size > CACHE_ENTRIES) this.docs.delete(this.docs.keys().next().value!);
    return doc;
  }
}
