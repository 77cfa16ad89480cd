/**
 * The load of a partition scenario (`test/fleet/partition.fdb.test.ts`):
 * clients on their own nodes (`netns-client.ts`), one per Baton instance,
 * each writing through its instance, every operation recorded with its
 * invocation and answer (`history.ts`).
 *
 * Each of an instance's workers, until stopped:
 * - creates checkpoints in a few tasks every instance writes to;
 * - patches the last checkpoint it created with If-Match: it is the only
 *   writer of that checkpoint, so it knows each version, and drops the
 *   checkpoint when an answer does not come (the patch may have applied);
 * - now and then hands a checkpoint of a task of its own off, and, once the
 *   handoff is stored, every instance's client acknowledges it at once;
 *   the winner's lease is recorded with its epoch.
 * Answers a partition may bring are expected (201, 202 queued, 503, none);
 * any other is kept in `unexpected`, which a scenario asserts is empty.
 */
import { createInterface } from 'node:readline';
import type { ChildProcess } from 'node:child_process';
import { TOKENS, type Who } from './app.js';
import type { Recorded } from './history.js';
import type { ClientAnswer, ClientRequest } from './netns-client.js';
import type { Topology } from './netns.js';

/** A client process on a node of the topology; sends requests from there. */
export class NodeClient {
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (answer: ClientAnswer) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();

  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const answer = JSON.parse(line) as ClientAnswer;
      const waiter = this.waiting.get(answer.id);
      if (waiter === undefined) return;
      this.waiting.delete(answer.id);
      clearTimeout(waiter.timer);
      waiter.resolve(answer);
    });
    child.once('exit', (code) => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`The client process exited with code ${code}.`));
      this.waiting.clear();
    });
  }

  static async start(topology: Topology, node: string): Promise<NodeClient> {
    const child = topology.spawn(node, process.execPath, ['--import', 'tsx', 'test/support/netns-client.ts'], { stdio: ['pipe', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`The client on ${node} exited with code ${code}.`)));
    });
    return new NodeClient(child);
  }

  send(request: Omit<ClientRequest, 'id'>): Promise<ClientAnswer> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      // The client answers every request by its own timeout; this one only catches a client that stopped.
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`The client did not report request ${id} (${request.method} ${request.url}).`));
      }, request.timeoutMs + 30_000);
      this.waiting.set(id, { resolve, reject, timer });
      this.child.stdin!.write(`${JSON.stringify({ ...request, id })}\n`);
    });
  }

  close(): void {
    this.child.stdin!.end();
  }
}

/** An instance and the client that writes through it. */
export interface Target {
  index: number;
  url: string;
  client: NodeClient;
}

export interface Reply {
  status?: number;
  etag?: string;
  json: Record<string, unknown>;
  invokedAt: number;
  answeredAt?: number;
}

export interface CallOptions {
  body?: unknown;
  headers?: Record<string, string>;
  who?: Who;
  timeoutMs?: number;
}

/** How long a client waits for an answer before it counts the request unanswered. */
export const CLIENT_TIMEOUT_MS = Number(process.env.BATON_PARTITION_CLIENT_TIMEOUT_MS ?? 15_000);

/** One request from `client` to the instance at `url`. */
export async function call(client: NodeClient, url: string, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${TOKENS[options.who ?? 'writer']}`, ...options.headers };
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  const answer = await client.send({
    method,
    url: `${url}${path}`,
    headers,
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    timeoutMs: options.timeoutMs ?? CLIENT_TIMEOUT_MS,
  });
  let json: Record<string, unknown> = {};
  try {
    if (answer.body) json = JSON.parse(answer.body) as Record<string, unknown>;
  } catch {
    json = { text: answer.body };
  }
  return {
    ...(answer.status !== undefined ? { status: answer.status } : {}),
    ...(answer.etag !== undefined ? { etag: answer.etag } : {}),
    json,
    invokedAt: answer.invokedAt,
    ...(answer.answeredAt !== undefined ? { answeredAt: answer.answeredAt } : {}),
  };
}

/** The answers each kind of request may get while links are cut; `undefined` is no answer. */
const EXPECTED: Record<string, readonly (number | undefined)[]> = {
  create: [201, 202, 503, undefined],
  patch: [200, 202, 503, undefined],
  handoff: [201, 202, 503, undefined],
  ack: [200, 409, 503, undefined],
};

/** The version an answer names: its ETag, or the 202's `version`. */
function versionOf(reply: Reply): number | undefined {
  if (reply.status === 202) return typeof reply.json.version === 'number' ? reply.json.version : undefined;
  const etag = /^"(\d+)"$/.exec(reply.etag ?? '');
  return etag ? Number(etag[1]) : undefined;
}

export interface LoadOptions {
  /** Names the scenario's tasks apart from the other scenarios'. */
  tag: string;
  targets: readonly Target[];
  workersPerInstance?: number;
  /** How many tasks every instance creates checkpoints in. */
  sharedTasks?: number;
  /** The chance that a worker's next step is a handoff. */
  handoffShare?: number;
}

export class Load {
  readonly history: Recorded[] = [];
  /** Answers no partition explains (a 500, a 412 to a checkpoint's only writer), with what was sent. */
  readonly unexpected: string[] = [];
  /** Every task written to. */
  readonly tasks = new Set<string>();
  /** Handoffs answered 201 or 202: each must exist once the queues have replayed. */
  readonly handoffs = new Set<string>();
  /** What each queued create's 202 promised: the checkpoint's hash and `createdAt`, kept whatever else is written meanwhile (DESIGN §10). */
  readonly promised = new Map<string, { hash: string; createdAt: string }>();
  /** The `create` labels of the creates that went unanswered: each may have applied, once at most. */
  readonly unanswered = new Set<number>();
  /** Per patched checkpoint: the last version an answer acknowledged, and whether a later patch's outcome is unknown. */
  readonly versions = new Map<string, { acknowledged: number; unknownAfter: boolean }>();
  private stopped = false;
  private running: Promise<void>[] = [];
  private step = 0;

  constructor(private readonly options: LoadOptions) {}

  start(): void {
    const workers = this.options.workersPerInstance ?? 3;
    this.running = this.options.targets.flatMap((target) => Array.from({ length: workers }, (_, w) => this.work(target, w)));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running);
  }

  /** The 202s an instance answered to requests sent between `from` and `to`. */
  queued(instance: number, from = 0, to = Infinity): number {
    return this.history.filter((r) => r.instance === instance && r.op.status === 202 && r.invokedAt >= from && r.invokedAt <= to).length;
  }

  /** How many of an instance's requests sent between `from` and `to` went unanswered, and how many were acknowledged. */
  answers(instance: number, from = 0, to = Infinity): { unanswered: number; acknowledged: number } {
    const sent = this.history.filter((r) => r.instance === instance && r.invokedAt >= from && r.invokedAt <= to);
    return { unanswered: sent.filter((r) => r.op.status === undefined).length, acknowledged: sent.filter((r) => [200, 201, 202].includes(r.op.status ?? 0)).length };
  }

  private record(instance: number, reply: Reply, op: Recorded['op']): void {
    this.history.push({ instance, invokedAt: reply.invokedAt, ...(reply.answeredAt !== undefined ? { answeredAt: reply.answeredAt } : {}), op });
  }

  private check(kind: keyof typeof EXPECTED, what: string, reply: Reply): void {
    if (!EXPECTED[kind]!.includes(reply.status)) this.unexpected.push(`${what}: ${reply.status} ${JSON.stringify(reply.json).slice(0, 300)}`);
  }

  private async work(target: Target, worker: number): Promise<void> {
    const { tag } = this.options;
    const shared = this.options.sharedTasks ?? 6;
    const handoffShare = this.options.handoffShare ?? 0.1;
    let own: { id: string; version: number } | undefined;
    while (!this.stopped) {
      const n = this.step++;
      const roll = Math.random();
      if (roll < handoffShare) {
        await this.handoff(target, `${tag}-handoff-${target.index}-${worker}-${n}`, n);
      } else if (own !== undefined && roll < 0.55) {
        own = await this.patch(target, own, n);
      } else {
        const made = await this.create(target, `${tag}-shared-${n % shared}`, `agent-${target.index}-${worker}`, n);
        if (made !== undefined) own = made;
      }
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 60));
    }
  }

  /** A create; answers the checkpoint and its version when acknowledged. */
  async create(target: Target, taskId: string, agentId: string, n: number, headers: Record<string, string> = {}): Promise<{ id: string; version: number } | undefined> {
    this.tasks.add(taskId);
    // `create` names the request: each is made at most once, answered or not.
    const body = { taskId, agentId, executionState: { phase: 'implementing', completedItems: [`step ${n} done`], pendingItems: [`step ${n + 1}`] }, labels: { instance: target.index, create: n } };
    const reply = await call(target.client, target.url, 'POST', '/v1/checkpoints', { body, headers });
    const id = reply.status === 202 ? (reply.json.checkpointId as string | undefined) : reply.status === 201 ? (reply.json.id as string | undefined) : undefined;
    this.record(target.index, reply, { kind: 'create', taskId, ...(reply.status !== undefined ? { status: reply.status } : {}), ...(id !== undefined ? { checkpointId: id } : {}) });
    if (reply.status === undefined) this.unanswered.add(n);
    this.check('create', `create in ${taskId} through instance ${target.index}`, reply);
    const queued = reply.status === 202 ? (reply.json.checkpoint as { createdAt: string; compliance: { hash: string } } | undefined) : undefined;
    if (id !== undefined && queued !== undefined) this.promised.set(id, { hash: queued.compliance.hash, createdAt: queued.createdAt });
    const version = versionOf(reply);
    return id !== undefined && version !== undefined ? { id, version } : undefined;
  }

  /** A patch of the worker's own checkpoint; answers it with its new version, or nothing when the version is no longer known. */
  private async patch(target: Target, own: { id: string; version: number }, n: number): Promise<{ id: string; version: number } | undefined> {
    const reply = await call(target.client, target.url, 'PATCH', `/v1/checkpoints/${own.id}`, {
      body: { executionState: { currentFocus: `step ${n}` }, labels: { patch: n } },
      headers: { 'content-type': 'application/merge-patch+json', 'if-match': `"${own.version}"` },
    });
    const version = reply.status === 200 || reply.status === 202 ? versionOf(reply) : undefined;
    this.record(target.index, reply, { kind: 'patch', checkpointId: own.id, ifMatch: own.version, ...(reply.status !== undefined ? { status: reply.status } : {}), ...(version !== undefined ? { version } : {}) });
    this.check('patch', `patch of ${own.id} at version ${own.version} through instance ${target.index}`, reply);
    const known = this.versions.get(own.id) ?? { acknowledged: own.version, unknownAfter: false };
    if (version !== undefined) {
      this.versions.set(own.id, { acknowledged: version, unknownAfter: false });
      return { id: own.id, version };
    }
    // No answer, or an answer that does not say whether it applied (503 after a commit of unknown outcome): the version is no longer known.
    this.versions.set(own.id, { ...known, unknownAfter: known.unknownAfter || reply.status === undefined || reply.status >= 500 });
    return undefined;
  }

  /** A task of its own: a checkpoint, its handoff, and, once stored, every instance acknowledging it at once. */
  private async handoff(target: Target, taskId: string, n: number): Promise<void> {
    const made = await this.create(target, taskId, `agent-${target.index}`, n);
    if (made === undefined) return;
    const reply = await call(target.client, target.url, 'POST', `/v1/checkpoints/${made.id}/handoff`, { body: { trigger: 'context_limit' } });
    this.check('handoff', `handoff of ${made.id} through instance ${target.index}`, reply);
    const handoffId = reply.status === 201 ? (reply.json.handoff as { id: string }).id : reply.status === 202 ? (reply.json.handoffId as string) : undefined;
    if (handoffId === undefined) return;
    this.handoffs.add(handoffId);
    // A queued handoff is acknowledged by nobody here: it exists only once its queue has replayed.
    if (reply.status !== 201) return;
    await Promise.all(
      this.options.targets.map(async (other) => {
        const agentId = `successor-${other.index}`;
        const ack = await call(other.client, other.url, 'POST', `/v1/handoffs/${handoffId}/ack`, { body: { agentId } });
        this.record(other.index, ack, { kind: 'ack', handoffId, agentId, ...(ack.status !== undefined ? { status: ack.status } : {}) });
        this.check('ack', `acknowledgment of ${handoffId} through instance ${other.index}`, ack);
        const lease = ack.status === 200 ? (ack.json.lease as { epoch: number } | undefined) : undefined;
        if (lease !== undefined) this.record(other.index, ack, { kind: 'lease', taskId, agentId, status: 200, epoch: lease.epoch });
      }),
    );
  }
}
