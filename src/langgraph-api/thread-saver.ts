/**
 * `BatonThreadSaver`: the threads of a LangGraph API embed server (their ids
 * and metadata; `ThreadSaver` of `@langchain/langgraph-api`) kept in Baton,
 * beside the thread's checkpoints, so that a restarted server, or a second
 * one, knows every thread its checkpoints belong to. A thread is one
 * checkpoint in the thread's Baton task (the task `BatonSaver` writes the
 * thread's checkpoints to), labelled `lg.kind=thread`; its metadata is
 * replaced by a patch with If-Match at every change.
 *
 * @module
 */
import type { ThreadSaver } from '@langchain/langgraph-api/experimental/embed';
import { BatonError, type BatonClient } from '../client/index.js';
import type { Checkpoint } from '../client/types.js';

export interface BatonThreadSaverOptions {
  client: BatonClient;
  /** The Baton agent id thread records are written as; the same as the BatonSaver's (default `langgraph`). */
  agentId?: string;
  /** The BatonSaver's task prefix: a thread's task is `taskPrefix + thread_id` (default `langgraph:`). */
  taskPrefix?: string;
}

type Thread = NonNullable<Awaited<ReturnType<ThreadSaver['get']>>>;
type Metadata = Thread['metadata'];
/** A thread as the LangGraph API answers it: its times are its checkpoint's. */
export type BatonThread = Thread & { created_at: string; updated_at: string; status: 'idle'; values: Record<string, never> };
type SearchOptions = Parameters<NonNullable<ThreadSaver['search']>>[0];

/** What a thread checkpoint holds: its metadata as JSON text, since a JSON Merge Patch cannot write a null. */
interface ThreadRecord {
  threadId: string;
  metadata: string;
}

const LABEL_KIND = 'lg.kind';
const KIND = 'thread';
const EXTENSION = 'langgraphThread';
const ATTEMPTS = 20;

export class BatonThreadSaver implements ThreadSaver {
  readonly client: BatonClient;
  readonly agentId: string;
  readonly taskPrefix: string;

  constructor(options: BatonThreadSaverOptions) {
    if (options?.client === undefined) throw new TypeError('BatonThreadSaver needs a client.');
    this.client = options.client;
    this.agentId = options.agentId ?? 'langgraph';
    this.taskPrefix = options.taskPrefix ?? 'langgraph:';
  }

  async get(id: string): Promise<Thread> {
    const doc = await this.find(id);
    // The embed server answers a thread it does not know with nothing, as its own in-memory saver does.
    return (doc === undefined ? undefined : threadOf(doc)) as Thread;
  }

  async set(id: string, options: { kind: 'put' | 'patch'; metadata?: Metadata }): Promise<Thread> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const doc = await this.find(id);
      try {
        if (doc === undefined) {
          const created = await this.client.checkpoints.create(
            { taskId: this.taskPrefix + id, agentId: this.agentId, labels: { [LABEL_KIND]: KIND }, extensions: { [EXTENSION]: record(id, options.metadata ?? {}) } },
            // Two servers making one thread together make one record (a different body answers 422: patch theirs).
            { idempotencyKey: `lg-thread:${await sha256(this.taskPrefix + id)}:first` },
          );
          return threadOf(created);
        }
        const metadata = options.kind === 'patch' ? { ...threadOf(doc).metadata, ...options.metadata } : (options.metadata ?? {});
        return threadOf(await this.client.checkpoints.patch(doc.id, { extensions: { [EXTENSION]: record(id, metadata) } }, { ifMatch: doc.version }));
      } catch (error) {
        if (error instanceof BatonError && (error.code === 'version_conflict' || error.code === 'idempotency_key_reused')) continue;
        throw error;
      }
    }
    throw new Error('The thread changed under every attempt to write it; try again.');
  }

  /** Removes the thread's Baton task, its checkpoints with it (a purge: admin, or writer where BATON_WRITER_PURGE=1). */
  async delete(id: string): Promise<void> {
    try {
      await this.client.tasks.purge(this.taskPrefix + id);
    } catch (error) {
      if (!(error instanceof BatonError && error.status === 404)) throw error;
    }
  }

  /** Threads whose metadata holds every given entry, sorted and cut as asked; `total` counts every match. */
  async *search(options: SearchOptions): AsyncGenerator<{ thread: Thread; total: number }> {
    const wanted = Object.entries(options.metadata ?? {});
    const matches: BatonThread[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.checkpoints.search({ agentId: this.agentId, labels: { [LABEL_KIND]: KIND }, limit: 1_000, ...(cursor ? { cursor } : {}) });
      for (const doc of page.items) {
        const thread = threadOf(doc);
        // Another prefix's threads are another server's.
        if (doc.taskId !== this.taskPrefix + thread.thread_id) continue;
        if (wanted.every(([key, value]) => JSON.stringify(thread.metadata[key]) === JSON.stringify(value))) matches.push(thread);
      }
      cursor = page.nextCursor;
    } while (cursor);
    const key = options.sortBy;
    const sign = options.sortOrder === 'asc' ? 1 : -1;
    // Baton's search answers newest created first: threads created in the same millisecond keep that order, reversed for asc.
    const rank = new Map(matches.map((thread, index) => [thread, index]));
    matches.sort((a, b) => sign * (Date.parse(a[key]) - Date.parse(b[key])) || sign * (rank.get(b)! - rank.get(a)!));
    for (const thread of matches.slice(options.offset, options.offset + options.limit)) yield { thread, total: matches.length };
  }

  private async find(id: string): Promise<Checkpoint | undefined> {
    const page = await this.client.checkpoints.search({ taskId: this.taskPrefix + id, labels: { [LABEL_KIND]: KIND }, limit: 1 });
    // A thread record that failed Baton's hash check is an error, not a thread that does not exist.
    if (page.corrupted !== undefined && page.corrupted.length > 0) throw new Error(`The record of thread ${id} failed Baton's hash check (${page.corrupted.join(', ')}); restore it or recover the task.`);
    return page.items[0];
  }
}

function record(threadId: string, metadata: Metadata): ThreadRecord {
  return { threadId, metadata: JSON.stringify(metadata ?? {}) };
}

function threadOf(doc: Checkpoint): BatonThread {
  const stored = (doc.extensions as Record<string, unknown>)[EXTENSION] as ThreadRecord;
  return { thread_id: stored.threadId, metadata: JSON.parse(stored.metadata) as Metadata, created_at: doc.createdAt, updated_at: doc.updatedAt, status: 'idle', values: {} };
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
