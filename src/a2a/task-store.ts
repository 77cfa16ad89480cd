/**
 * `BatonTaskStore`: the A2A SDK's `TaskStore` kept in Baton, over HTTP,
 * through the typed client, so an A2A server's tasks survive its restarts
 * and are shared by its replicas. An A2A task is a Baton task whose id is
 * the A2A task id (after an optional prefix); each caller's copy of it
 * (tenant and owner, as the SDK scopes them) is one checkpoint of that task,
 * replaced at every save by a patch with If-Match, so every save is a
 * hashed, audited revision. docs/a2a.md explains the layout and its costs.
 *
 * @module
 */
import { TaskState, taskStateToJSON, type ListTasksRequest, type ListTasksResponse, type Task } from '@a2a-js/sdk';
import { resolveUserScope, type OwnerResolver, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import { BatonError, type BatonClient } from '../client/index.js';
import type { Checkpoint, CheckpointInput, SearchQuery, TaskStateRequest } from '../client/types.js';
import { LABEL, batonState, checkpointOf, decodePageToken, encodePageToken, scopeLabel, sha256, taskOf, type Scope } from './record.js';

export interface BatonTaskStoreOptions {
  client: BatonClient;
  /** The Baton agent id the checkpoints are written as (default `a2a`). */
  agentId?: string;
  /** Who owns a caller's tasks; the SDK's `resolveUserScope` (the user's name) by default. */
  ownerResolver?: OwnerResolver;
  /** Put before the A2A task id to make the Baton task id (default none: the ids are the same). */
  taskPrefix?: string;
}

/** The SDK's page size when a request names none. */
const DEFAULT_PAGE_SIZE = 50;
/** Search results read per request while listing. */
const PAGE = 1_000;
const ATTEMPTS = 20;
/** Checkpoint ids and versions remembered per task and scope, so a save is one request. */
const CACHED = 10_000;

interface Known {
  id: string;
  version: number;
  /** The A2A state the checkpoint holds (its `a2a.state` label). */
  state: string | undefined;
  status: Checkpoint['status'];
}

export class BatonTaskStore implements TaskStore {
  readonly client: BatonClient;
  readonly agentId: string;
  readonly taskPrefix: string;
  private readonly ownerResolver: OwnerResolver;
  private readonly known = new Map<string, Known>();

  constructor(options: BatonTaskStoreOptions) {
    if (options?.client === undefined) throw new TypeError('BatonTaskStore needs a client.');
    this.client = options.client;
    this.agentId = options.agentId ?? 'a2a';
    this.taskPrefix = options.taskPrefix ?? '';
    this.ownerResolver = options.ownerResolver ?? resolveUserScope;
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const scope = await scopeLabel(this.scopeOf(context));
    const taskId = this.taskPrefix + task.id;
    // Serialized now: the caller may change its task object while the request is on its way.
    const input = checkpointOf(taskId, this.agentId, scope, task);
    const state = batonState(task);
    const stateLabelOfSave = input.labels?.[LABEL.state] === undefined ? undefined : String(input.labels[LABEL.state]);
    const key = `${taskId}\0${scope}`;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const current = this.known.get(key) ?? (await this.find(taskId, scope));
      try {
        const written =
          current === undefined
            ? await this.client.checkpoints.create(input, { idempotencyKey: `a2a-task:${await sha256(key)}:first` })
            : current.status === 'finalized'
              ? await this.succeed(current, input)
              : await this.client.checkpoints.patch(current.id, patchOf(input), { ifMatch: current.version });
        this.remember(key, written, stateLabelOfSave);
        if (state !== undefined && stateLabelOfSave !== current?.state) await this.settle(taskId, state);
        return;
      } catch (error) {
        this.known.delete(key);
        // Another replica saved first (412), made the first checkpoint with another body (422), or it was finalized: read again.
        if (error instanceof BatonError && ['version_conflict', 'idempotency_key_reused', 'checkpoint_finalized'].includes(error.code)) continue;
        throw error;
      }
    }
    throw new Error('The A2A task changed under every attempt to save it; try again.');
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const scope = await scopeLabel(this.scopeOf(context));
    const doc = await this.newest({ taskId: this.taskPrefix + taskId, labels: { [LABEL.scope]: scope, [LABEL.kind]: 'task' }, limit: 1 });
    return doc === undefined ? undefined : taskOf(doc);
  }

  /**
   * Newest status first (ties by task id, descending), as the SDK's own
   * stores list. Baton's search orders by write time, not status time, so
   * the caller's tasks are read whole (page after page) and ordered here.
   */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const scope = await scopeLabel(this.scopeOf(context));
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    // The scope label leads, so the search walks this caller's tasks only.
    const labels: Record<string, string> = { [LABEL.scope]: scope, [LABEL.kind]: 'task' };
    if (params.contextId) labels[LABEL.context] = params.contextId;
    if (params.status !== undefined && params.status !== TaskState.TASK_STATE_UNSPECIFIED) labels[LABEL.state] = taskStateToJSON(params.status);
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;

    const seen = new Set<string>();
    const unreadable = new Set<string>();
    let rows: { doc: Checkpoint; time: number; id: string }[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.checkpoints.search({ labels, limit: PAGE, ...(cursor ? { cursor } : {}) });
      for (const id of page.corrupted ?? []) unreadable.add(id);
      for (const doc of page.items) {
        const id = String(doc.labels[LABEL.id]);
        // Another store's tasks (another prefix) are not this one's; newest first, a task's older checkpoint
        // (one handed off before its successor) is passed over.
        if (doc.taskId !== this.taskPrefix + id || seen.has(doc.taskId)) continue;
        seen.add(doc.taskId);
        const time = Number(doc.labels[LABEL.updated] ?? 0);
        if (after !== undefined && !(time > after)) continue;
        rows.push({ doc, time, id });
      }
      cursor = page.nextCursor;
    } while (cursor);
    rows.sort((a, b) => b.time - a.time || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    // A checkpoint Baton could not verify matched this caller's scope but cannot be read: counted, never shown.
    const totalSize = rows.length + unreadable.size;
    if (params.pageToken) {
      const { time, id } = decodePageToken(params.pageToken);
      rows = rows.filter((row) => row.time < time || (row.time === time && row.id < id));
    }
    const page = rows.slice(0, pageSize);
    const tasks: Task[] = [];
    for (const row of page) {
      try {
        const task = taskOf(row.doc);
        if (!params.includeArtifacts) task.artifacts = [];
        if (params.historyLength !== undefined && params.historyLength <= 0) task.history = [];
        tasks.push(task);
      } catch (error) {
        // One unreadable task must not hide the others, as in the SDK's database store.
        console.error(`Skipping A2A task "${row.id}": its checkpoint ${row.doc.id} holds no readable task.`, error);
      }
    }
    const last = page.at(-1);
    return { tasks, nextPageToken: rows.length > pageSize && last !== undefined ? encodePageToken(last.time, last.id) : '', pageSize, totalSize };
  }

  private scopeOf(context: ServerCallContext): Scope {
    return { tenant: context.tenant ?? '', owner: this.ownerResolver(context) };
  }

  /** The checkpoint holding a caller's copy of a task, read now. */
  private async find(taskId: string, scope: string): Promise<Known | undefined> {
    const doc = await this.newest({ taskId, labels: { [LABEL.scope]: scope, [LABEL.kind]: 'task' }, limit: 1 });
    if (doc === undefined) return undefined;
    if (doc.status === 'finalized' && doc.finalStatus === 'handoff') {
      throw new Error(`The Baton task of A2A task ${taskId} is being handed off; the agent that acknowledges the handoff saves it next.`);
    }
    return { id: doc.id, version: doc.version, state: stateLabel(doc), status: doc.status };
  }

  /** A new checkpoint after one that was finalized (a finished task taken up again), keyed on it so replicas make one. */
  private async succeed(previous: Known, input: CheckpointInput): Promise<Checkpoint> {
    return this.client.checkpoints.create({ ...input, parentId: previous.id }, { idempotencyKey: `a2a-task:after:${previous.id}` });
  }

  /**
   * The newest checkpoint of a caller's task. One newer than it that failed
   * Baton's hash check is an error, not a task that is not there: answering
   * an older copy, or none, would lose what it held unseen.
   */
  private async newest(query: SearchQuery): Promise<Checkpoint | undefined> {
    const page = await this.client.checkpoints.search(query);
    if (page.corrupted !== undefined && page.corrupted.length > 0) {
      throw new Error(`The newest checkpoint of Baton task ${query.taskId} failed Baton's hash check (${page.corrupted.join(', ')}); restore it or recover the task.`);
    }
    return page.items[0];
  }

  private remember(key: string, doc: Checkpoint, state: string | undefined): void {
    this.known.delete(key);
    this.known.set(key, { id: doc.id, version: doc.version, state, status: doc.status });
    if (this.known.size > CACHED) this.known.delete(this.known.keys().next().value!);
  }

  /**
   * The Baton task's state follows the A2A task's (they share their words),
   * so monitors and the console see it. While Baton's own protocol holds the
   * task (a handoff pending, a blocked task) its state is left to it.
   */
  private async settle(taskId: string, state: TaskStateRequest['state']): Promise<void> {
    try {
      await this.client.tasks.setState(taskId, { state });
    } catch (error) {
      if (!(error instanceof BatonError && (error.code === 'handoff_pending' || error.code === 'conflict'))) throw error;
    }
  }
}

/** A save as a JSON Merge Patch: the task replaced whole, the labels and summary rewritten, a label that no longer applies removed. */
function patchOf(input: CheckpointInput): Record<string, unknown> {
  return {
    executionState: { phase: input.executionState?.phase, currentFocus: input.executionState?.currentFocus ?? null },
    labels: { ...input.labels, [LABEL.state]: input.labels?.[LABEL.state] ?? null },
    extensions: input.extensions,
  };
}

function stateLabel(doc: Checkpoint): string | undefined {
  const value = doc.labels[LABEL.state];
  return value === undefined ? undefined : String(value);
}
