/**
 * `BatonSession`: the OpenAI Agents SDK's `Session` (conversation history)
 * kept in Baton, over HTTP, through the typed client. The session is a
 * Baton task whose id is the session id; its history lives in segment
 * checkpoints (record.ts). Every change is one JSON Merge Patch of the
 * newest segment with If-Match, so a change is atomic and two writers in
 * different processes never lose each other's items; a history transaction
 * records its operation id in the same patch, so repeating it applies
 * nothing. docs/openai-agents.md explains the layout and its costs.
 *
 * @module
 */
import {
  UserError,
  applySessionHistoryMutations,
  getLogger,
  type AgentInputItem,
  type SessionHistoryRewriteArgs,
  type SessionHistoryRewriteAwareSession,
  type SessionHistoryTransactionArgs,
  type SessionHistoryTransactionAwareSession,
} from '@openai/agents-core';
import { BatonError, type BatonClient } from '../client/index.js';
import type { Checkpoint } from '../client/types.js';
import { SealedSegments, count, splice, type View } from './history.js';
import { CorruptedError, EXTENSION, KIND, LABEL, decodeItem, encodeItem, segmentItems, sessionOf, type SessionRecord, type StoredItem } from './record.js';
import { comparable, fingerprint, snapshotTransactionArgs } from './transaction.js';

export interface BatonSessionOptions {
  client: BatonClient;
  /** The session id, which is also its Baton task id; a random UUID when absent. */
  sessionId?: string;
  /** The Baton agent id the session's checkpoints are written as (default `openai-agents`). */
  agentId?: string;
  /** Where item contents are logged at debug level, unless the logger says not to log model or tool data. */
  logger?: Logger;
  /** How large (bytes of JSON) the newest segment grows before a new one takes over (default 64 KiB). */
  segmentBytes?: number;
}

/** A change to the history, worked out against one version of the head. */
interface Change<T> {
  /** Merged into the head's `extensions.openaiAgents`; absent when nothing is to be written. */
  patch?: Record<string, unknown>;
  result: T;
}

/** The SDK's logger type (`getLogger`'s), which the package does not export by name. */
export type Logger = ReturnType<typeof getLogger>;

const EMPTY: SessionRecord = { kind: KIND.session, prior: [], next: 0 };
const DEFAULT_SEGMENT_BYTES = 64 * 1024;
/** Tries of one change when other writers keep getting there first. */
const ATTEMPTS = 50;

export class BatonSession implements SessionHistoryRewriteAwareSession, SessionHistoryTransactionAwareSession {
  readonly client: BatonClient;
  readonly sessionId: string;
  readonly agentId: string;
  private readonly logger: Logger;
  private readonly segmentBytes: number;
  /** The head as this instance last read or wrote it; a stale one costs a 412 and a fresh read. */
  private head: Checkpoint | undefined;
  private readonly sealed: SealedSegments;
  /** This instance's operations, one after another (other processes are kept apart by If-Match). */
  private turn: Promise<unknown> = Promise.resolve();
  /** Set when the id-keyed create of the first segment answered with one that no longer exists (the task was purged). */
  private startAfter: string | undefined;

  constructor(options: BatonSessionOptions) {
    if (options?.client === undefined) throw new TypeError('BatonSession needs a client.');
    this.client = options.client;
    this.sessionId = options.sessionId ?? crypto.randomUUID();
    this.agentId = options.agentId ?? 'openai-agents';
    this.logger = options.logger ?? getLogger('openai-agents:baton');
    this.segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    this.sealed = new SealedSegments(this.client);
  }

  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  getItems(limit?: number): Promise<AgentInputItem[]> {
    return this.inTurn(async () => {
      if (limit !== undefined && limit <= 0) return [];
      const view = await this.read();
      const stored = limit === undefined ? await this.sealed.all(view) : await this.sealed.tail(view, limit);
      const items = stored.map((item) => decodeItem<AgentInputItem>(item));
      this.debug(() => `Getting items from Baton session (${this.sessionId}): ${JSON.stringify(items)}`);
      return items;
    });
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    const stored = items.map((item) => encodeItem(item));
    this.debug(() => `Adding items to Baton session (${this.sessionId}): ${JSON.stringify(items)}`);
    return this.inTurn(() => this.change(async (view) => ({ patch: splice(view, count(view), stored), result: undefined })));
  }

  popItem(): Promise<AgentInputItem | undefined> {
    return this.inTurn(async () => {
      const popped = await this.change<StoredItem | undefined>(async (view) => {
        const total = count(view);
        if (total === 0) return { result: undefined };
        const [last] = await this.sealed.tail(view, 1);
        return { patch: splice(view, total - 1, []), result: last };
      });
      if (popped === undefined) return undefined;
      const item = decodeItem<AgentInputItem>(popped);
      this.debug(() => `Popping item from Baton session (${this.sessionId}): ${JSON.stringify(item)}`);
      return item;
    });
  }

  clearSession(): Promise<void> {
    this.logger.debug(`Clearing Baton session (${this.sessionId})`);
    return this.inTurn(() =>
      this.change(async (view) => {
        if (view.head === undefined) return { result: undefined };
        // Applied operations go too: a cleared session starts afresh, as the SDK's MemorySession does.
        return { patch: { prior: [], items: null, ops: null }, result: undefined };
      }),
    );
  }

  async applyHistoryMutations(args: SessionHistoryRewriteArgs): Promise<void> {
    if (args.mutations.length === 0) return;
    return this.inTurn(() =>
      this.change(async (view) => {
        const before = (await this.sealed.all(view)).map((item) => decodeItem<AgentInputItem>(item));
        const after = applySessionHistoryMutations(before, args.mutations);
        // Only what changed is rewritten: from the first item that differs to the end.
        let same = 0;
        while (same < before.length && same < after.length && comparable([before[same]]) === comparable([after[same]])) same += 1;
        if (same === before.length && same === after.length) return { result: undefined };
        return { patch: splice(view, same, after.slice(same).map((item) => encodeItem(item))), result: undefined };
      }),
    );
  }

  async applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void> {
    // Checked and copied before anything is read or written, so a refused transaction records nothing.
    const { operationId, transaction } = snapshotTransactionArgs(args);
    return this.inTurn(async () => {
      const print = await fingerprint(transaction);
      await this.change(async (view) => {
        const applied = view.record.ops?.[operationId];
        if (applied !== undefined) {
          if (applied !== print) throw new UserError('Session history operation was already applied with a different transaction.');
          return { result: undefined };
        }
        const total = count(view);
        let patch: Record<string, unknown>;
        if (transaction.type === 'append_items') {
          patch = splice(view, total, transaction.items.map((item) => encodeItem(item)));
        } else {
          const { expectedSuffix, replacement } = transaction;
          const suffix = expectedSuffix.length > total ? undefined : await this.sealed.tail(view, expectedSuffix.length);
          if (suffix === undefined || comparable(suffix.map((item) => decodeItem(item))) !== comparable(expectedSuffix)) {
            throw new UserError('Session history suffix no longer matches the transaction precondition.');
          }
          patch = splice(view, total - expectedSuffix.length, replacement.map((item) => encodeItem(item)));
        }
        patch.ops = { [operationId]: print };
        return { patch, result: undefined };
      });
    });
  }

  /** Runs `work` after this instance's earlier operations, whatever became of them. */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work, work);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /**
   * Applies a change to the head with If-Match, reading again and working
   * the change out again when another writer got there first. The head is
   * made when the session has none, and a new one takes over when it is
   * sealed, finalized, or has outgrown its budget.
   */
  private async change<T>(plan: (view: View) => Promise<Change<T>>): Promise<T> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const head = attempt === 0 && this.head !== undefined ? this.head : (await this.read()).head;
      if (head === undefined) {
        // Nothing to undo in a session that does not exist: reading it answers the same as writing would.
        const empty = await plan({ head: undefined, record: EMPTY });
        if (empty.patch === undefined) return empty.result;
        await this.start();
        continue;
      }
      const record = sessionOf(head)!;
      if (head.status === 'finalized' && head.finalStatus === 'handoff') {
        throw new UserError("The session's Baton task is being handed off; the agent that acknowledges the handoff writes to it next.");
      }
      if (head.status === 'finalized' || record.sealed) {
        await this.succeed(head, record);
        continue;
      }
      if (JSON.stringify(record.items ?? {}).length > this.segmentBytes) {
        if (await this.patch(head, { sealed: true })) await this.succeed(this.head!, sessionOf(this.head!)!);
        continue;
      }
      const change = await plan({ head, record });
      if (change.patch === undefined) return change.result;
      if (await this.patch(head, change.patch)) return change.result;
    }
    throw new UserError('The Baton session changed under every attempt to write to it; try again.');
  }

  /** Patches the head with If-Match: false when another writer changed, sealed or finalized it first. */
  private async patch(head: Checkpoint, patch: Record<string, unknown>): Promise<boolean> {
    try {
      this.head = await this.client.checkpoints.patch(head.id, { extensions: { [EXTENSION]: patch } }, { ifMatch: head.version });
      return true;
    } catch (error) {
      this.head = undefined;
      if (error instanceof BatonError && (error.code === 'version_conflict' || error.code === 'checkpoint_finalized')) return false;
      throw error;
    }
  }

  /**
   * The first segment. Its create is keyed on the session, so writers that
   * start the session together make one segment between them (Baton answers
   * a repeated Idempotency-Key with its first answer).
   */
  private async start(): Promise<void> {
    const key = `${await this.keyPrefix()}:start${this.startAfter === undefined ? '' : `:${this.startAfter}`}`;
    const created = await this.createSegment({ ...EMPTY, items: {}, ops: {} }, undefined, key);
    if (created !== undefined && (await this.read()).head === undefined) {
      // The key's first answer was a segment since purged with its task: the next key follows from its id.
      this.startAfter = created.id;
    }
  }

  /** The successor of a sealed or finalized segment, keyed on it, so that writers who find it together make one. */
  private async succeed(head: Checkpoint, record: SessionRecord): Promise<void> {
    const own = segmentItems(record);
    const next: SessionRecord = {
      kind: KIND.session,
      prior: own.length > 0 ? [...record.prior, [head.id, own.length]] : record.prior,
      items: {},
      next: record.next,
      ops: record.ops ?? {},
    };
    if (own.length > 0) this.sealed.remember(head.id, own);
    await this.createSegment(next, head.id, `${await this.keyPrefix()}:after:${head.id}`);
  }

  /** Idempotency-Keys are visible ASCII of at most 255 characters: the session id goes in as its SHA-256. */
  private async keyPrefix(): Promise<string> {
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(this.sessionId));
    return `baton-session:${Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
  }

  private async createSegment(record: SessionRecord, parentId: string | undefined, idempotencyKey: string): Promise<Checkpoint | undefined> {
    try {
      return await this.client.checkpoints.create(
        {
          taskId: this.sessionId,
          agentId: this.agentId,
          ...(parentId !== undefined ? { parentId } : {}),
          labels: { [LABEL.kind]: KIND.session },
          extensions: { [EXTENSION]: record },
        },
        { idempotencyKey },
      );
    } catch (error) {
      // Another writer made it first, with another agent id: the next read finds theirs.
      if (error instanceof BatonError && error.code === 'idempotency_key_reused') return undefined;
      throw error;
    } finally {
      this.head = undefined;
    }
  }

  /** The newest segment of the session, read now. */
  private async read(): Promise<View> {
    const page = await this.client.checkpoints.search({ taskId: this.sessionId, labels: { [LABEL.kind]: KIND.session }, limit: 1 });
    // A newer segment that failed Baton's hash check: answering from an older one would lose its items unseen.
    if (page.corrupted !== undefined && page.corrupted.length > 0) throw new CorruptedError(`session ${this.sessionId}`, page.corrupted);
    const head = page.items.find((doc) => sessionOf(doc) !== undefined);
    if (head !== undefined && head.status !== 'finalized') this.head = head;
    return { head, record: head === undefined ? EMPTY : sessionOf(head)! };
  }


  /** Logs item contents only where the logger allows model and tool data, as the SDK's sessions do. */
  private debug(message: () => string): void {
    if (!this.logger.dontLogModelData && !this.logger.dontLogToolData) this.logger.debug(message());
  }
}
