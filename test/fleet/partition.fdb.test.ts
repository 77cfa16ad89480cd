/**
 * Real network partitions (issue 46; `docs/reliability.md`): a FoundationDB
 * server of its own, three Baton processes and a client per instance, each
 * in a network namespace of its own on one bridge (`test/support/netns.ts`),
 * the clients writing through every instance while links are cut:
 * 1. an instance cut from the cluster both ways, mid-load: its writes are
 *    answered 202 and replayed exactly once when healed, its /readyz says
 *    degraded while cut, and its lease is fenced by the others (another
 *    instance grants the task's lease once it has expired; the cut
 *    instance's writes under the old epoch are refused after the heal);
 * 1b. the same cut one way: what an instance sends to the cluster dropped,
 *    then what it receives;
 * 2. an instance cut from its clients, not from the cluster: both ways,
 *    then only its answers;
 * 3. the cluster cut from every instance: all queue; heal; all replay;
 * 4. one instance's link flapping (down and up every
 *    `BATON_PARTITION_FLAP_PERIOD_MS`, default 300 ms) for
 *    `BATON_PARTITION_FLAP_MS` (default 60 s).
 * Every operation is recorded with its invocation and answer
 * (`test/support/history.ts`); once healed and replayed, each task's
 * history is read through a healthy instance and checked: no violation,
 * nothing acknowledged lost or applied twice, every audit chain verifying,
 * every queued checkpoint with the hash and time its 202 promised, every
 * patched checkpoint at the version its answers promised.
 *
 * A client counts a request unanswered after `BATON_PARTITION_CLIENT_TIMEOUT_MS`
 * (15 s): FoundationDB's transaction time limit is 5 s, and a write through
 * a cut instance is queued once its transaction has timed out, so its 202
 * comes 5 to 10 s after it was sent (`docs/reliability.md`).
 *
 * `BATON_PARTITION_LOGS=<dir>` keeps what each instance logged there.
 *
 * As root, with `FDB_CLUSTER_FILE` (the client library's setup; the
 * scenarios make their own cluster) and `FDB_SERVER_BIN`; skipped with the
 * reason otherwise, and failed with it under `BATON_REQUIRE_FDB=1`
 * (`npm run test:partition`).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadBinding } from '../../src/store/fdb.js';
import { removeDir, tempDataDir } from '../support/crash-server.js';
import { startFleet, type Fleet } from '../support/fleet.js';
import { checkHistory, type Recorded } from '../support/history.js';
import { fdbCliBin, startFdbNode, type FdbNode } from '../support/netns-fdb.js';
import { call, Load, NodeClient, type Target } from '../support/netns-load.js';
import { partitionSkipReason, Topology, type Cut } from '../support/netns.js';

const INSTANCES = 3;
const FLAP_MS = Number(process.env.BATON_PARTITION_FLAP_MS ?? 60_000);
const FLAP_PERIOD_MS = Number(process.env.BATON_PARTITION_FLAP_PERIOD_MS ?? 300);
/** How long each cut lasts in scenarios 1–3. */
const CUT_MS = 15_000;
const LEASE_TTL_MS = 6_000;

const skip =
  partitionSkipReason() ??
  (existsSync(fdbCliBin()) ? undefined : `no fdbcli at ${fdbCliBin()}; set FDB_CLI_BIN`) ??
  (await loadBinding().then(
    () => undefined,
    () => 'the FoundationDB client (libfdb_c and the npm package foundationdb) is not installed',
  ));
if (skip !== undefined) console.log(`partition scenarios skipped: ${skip}`);

// `npm run test:partition` fails loudly where the scenarios cannot run, as `npm run test:fdb` does without a cluster.
describe.runIf(skip !== undefined && process.env.BATON_REQUIRE_FDB === '1')('partitions with real networks', () => {
  it('need root, a FoundationDB server binary and the client library', () => {
    throw new Error(`BATON_REQUIRE_FDB=1, but ${skip}.`);
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(skip !== undefined)(skip === undefined ? 'partitions with real networks' : `partitions with real networks — skipped: ${skip}`, () => {
  let topology: Topology | undefined;
  let dir: string | undefined;
  let fdb: FdbNode | undefined;
  let fleet: Fleet | undefined;
  const clients: NodeClient[] = [];
  const targets: Target[] = [];
  /** Nodes whose links a scenario may have left cut when it failed. */
  const nodes = ['fdb', ...Array.from({ length: INSTANCES }, (_, i) => [`baton-${i}`, `client-${i}`]).flat()];

  beforeAll(async () => {
    topology = new Topology();
    const t = topology;
    for (const name of nodes) t.add(name);
    dir = tempDataDir('baton-partition-');
    fdb = await startFdbNode(t, 'fdb', dir);
    fleet = await startFleet({
      size: INSTANCES,
      clusterFile: fdb.clusterFile,
      launcherOf: (i) => (command, args, options) => t.spawn(`baton-${i}`, command, args, options),
      envOf: (i) => ({ HOST: t.node(`baton-${i}`).address, PORT: '7070' }),
      // The replayer looks for the store every 200 ms; a stop waits at most 3 s for a journal that cannot drain.
      env: { BATON_QUEUE_REPLAY_MS: '200', BATON_SHUTDOWN_GRACE_MS: '3000' },
    });
    for (let i = 0; i < INSTANCES; i++) {
      const client = await NodeClient.start(t, `client-${i}`);
      clients.push(client);
      targets.push({ index: i, url: fleet.at(i).url, client });
    }
  }, 300_000);

  /** The scenario's load, stopped after it whatever happened. */
  let load: Load | undefined;
  function startLoad(tag: string): Load {
    load = new Load({ tag, targets });
    load.start();
    return load;
  }

  afterEach(async () => {
    for (const name of nodes) topology?.heal(name);
    await load?.stop();
    load = undefined;
  }, 60_000);

  afterAll(async () => {
    for (const client of clients) client.close();
    await fleet?.stop();
    // What each instance logged, kept for a look at a failed run.
    const logs = process.env.BATON_PARTITION_LOGS;
    if (logs !== undefined && fleet !== undefined) {
      mkdirSync(logs, { recursive: true });
      for (const instance of fleet.instances) writeFileSync(join(logs, `baton-${instance.index}.log`), instance.output());
    }
    await fdb?.stop();
    topology?.destroy();
    removeDir(dir);
  }, 120_000);

  /** The instance's readiness, asked by a client that reaches it. */
  async function readiness(instance: number, through = instance): Promise<{ status?: string; depth: number }> {
    const reply = await call(clients[through]!, targets[instance]!.url, 'GET', '/readyz', { timeoutMs: 5_000 });
    return { ...(typeof reply.json.status === 'string' ? { status: reply.json.status } : {}), depth: (reply.json.queue as { depth?: number } | undefined)?.depth ?? 0 };
  }

  /** Samples an instance's readiness every 500 ms until stopped. */
  function watchReadiness(instance: number, through = instance): { stop: () => Promise<{ at: number; status?: string }[]> } {
    const samples: { at: number; status?: string }[] = [];
    let stopped = false;
    const running = (async () => {
      while (!stopped) {
        const state = await readiness(instance, through);
        samples.push({ at: Date.now(), ...state });
        await sleep(500);
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        await running;
        return samples;
      },
    };
  }

  /** Resolves once every instance is ready with an empty queue: how long until each reached the store again, and until all queues were empty. */
  async function settled(timeoutMs = 120_000): Promise<{ readyMs: number[]; drainedMs: number }> {
    const started = Date.now();
    const readyMs: number[] = [];
    for (;;) {
      const states = await Promise.all(targets.map((t) => readiness(t.index)));
      states.forEach((s, i) => {
        if (s.status === 'ready') readyMs[i] ??= Date.now() - started;
      });
      if (states.every((s) => s.status === 'ready' && s.depth === 0)) return { readyMs, drainedMs: Date.now() - started };
      if (Date.now() - started > timeoutMs) throw new Error(`The instances did not become ready with empty queues: ${JSON.stringify(states)}`);
      await sleep(250);
    }
  }

  const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  /** "the store again after …, replayed after …" for the instances that were cut. */
  const recovered = ({ readyMs, drainedMs }: { readyMs: number[]; drainedMs: number }, instances: readonly number[]): string =>
    `store reached again ${instances.map((i) => seconds(readyMs[i] ?? drainedMs)).join(' / ')} after the heal, queues empty after ${seconds(drainedMs)}`;

  interface Listed {
    id: string;
    parentId?: string;
    labels?: { create?: number };
  }

  /** Every checkpoint a task lists, read through a healthy instance. */
  async function listed(taskId: string): Promise<Listed[]> {
    const items: Listed[] = [];
    for (let cursor: string | undefined, more = true; more; ) {
      const page = await call(clients[0]!, targets[0]!.url, 'GET', `/v1/tasks/${taskId}/checkpoints?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      // A task none of whose writes applied (each unanswered or refused) has no history: 404.
      if (page.status === 404 && items.length === 0) return [];
      expect(page.status, `history of ${taskId}`).toBe(200);
      items.push(...(page.json.items as Listed[]));
      cursor = page.json.nextCursor as string | undefined;
      more = cursor !== undefined;
    }
    return items;
  }

  async function deadLetters(): Promise<{ id: string; checkpointId: string; error: { code: string } }[]> {
    const items: { id: string; checkpointId: string; error: { code: string } }[] = [];
    for (let cursor: string | undefined, more = true; more; ) {
      const page = await call(clients[0]!, targets[0]!.url, 'GET', `/v1/admin/dead-letters?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { who: 'admin' });
      expect(page.status).toBe(200);
      items.push(...(page.json.items as typeof items));
      cursor = page.json.nextCursor as string | undefined;
      more = cursor !== undefined;
    }
    return items;
  }

  /**
   * Once healed and replayed: prints the scenario's figures, then checks the
   * history against what the cluster holds, each create request made once
   * at most, each handoff's acknowledger, every chain verifying, every
   * patched checkpoint at its promised version, every queued create as its
   * 202 promised, no dead letter but those expected, every process alive.
   */
  async function verify(
    name: string,
    load: Load,
    cuts: number,
    started: { at: number; dead: Set<string> },
    extra: { history?: Recorded[]; tasks?: string[]; dead?: [string, string][]; note?: string } = {},
  ): Promise<void> {
    const duration = ((Date.now() - started.at) / 1000).toFixed(1);
    const history = [...load.history, ...(extra.history ?? [])];
    const tasks = [...new Set([...load.tasks, ...(extra.tasks ?? [])])];
    const lists = new Map<string, Listed[]>();
    for (const taskId of tasks) lists.set(taskId, await listed(taskId));
    const final = new Map([...lists].map(([taskId, items]) => [taskId, items.map((c) => c.id)]));
    const { violations, figures } = checkHistory(history, final);
    // Every create request, answered or not, made one checkpoint at most (a handoff's child carries its parent's labels: it has a parent).
    const made = new Map<number, number>();
    for (const item of [...lists.values()].flat()) if (item.parentId === undefined && item.labels?.create !== undefined) made.set(item.labels.create, (made.get(item.labels.create) ?? 0) + 1);
    // Every handoff is there; its acknowledger is the agent whose acknowledgment was answered 200, or, when none was, one whose answer never came.
    const handoffs = await Promise.all(
      [...load.handoffs].map(async (handoffId) => {
        const read = await call(clients[0]!, targets[0]!.url, 'GET', `/v1/handoffs/${handoffId}`);
        const acks = history.flatMap(({ op }) => (op.kind === 'ack' && op.handoffId === handoffId ? [op] : []));
        return {
          handoffId,
          status: read.status,
          by: (read.json.acknowledgedBy as { agentId: string } | undefined)?.agentId,
          winner: acks.find((op) => op.status === 200)?.agentId,
          unknown: acks.filter((op) => op.status === undefined || op.status === 503).map((op) => op.agentId),
        };
      }),
    );
    const ackedUnanswered = handoffs.filter((h) => h.winner === undefined && h.by !== undefined).length;
    console.log(
      `partition scenario ${name}: operations ${figures.operations}, cuts ${cuts}, acknowledged ${figures.acknowledged} (${history.filter((r) => r.op.status === 202).length} queued, 202), ` +
        `unanswered ${figures.unanswered} (applied all the same: ${[...load.unanswered].filter((n) => made.has(n)).length} of ${load.unanswered.size} creates, ${ackedUnanswered} acknowledgments), ` +
        `lost ${figures.lost}, duplicated ${figures.duplicated}, duration ${duration} s${extra.note ? `; ${extra.note}` : ''}`,
    );

    expect(load.unexpected).toEqual([]);
    expect(violations).toEqual([]);
    expect(figures.lost).toBe(0);
    expect(figures.duplicated).toBe(0);
    expect([...made].filter(([, count]) => count > 1), 'create requests that made more than one checkpoint').toEqual([]);
    for (const h of handoffs) {
      expect(h.status, `handoff ${h.handoffId}`).toBe(200);
      if (h.winner !== undefined) expect(h.by, `acknowledger of ${h.handoffId}`).toBe(h.winner);
      else if (h.by !== undefined) expect(h.unknown, `acknowledger of ${h.handoffId}`).toContain(h.by);
    }
    for (const taskId of tasks.filter((task) => lists.get(task)!.length > 0)) {
      const verified = await call(clients[1]!, targets[1]!.url, 'GET', `/v1/tasks/${taskId}/audit/verify`);
      expect(verified.json, `audit chain of ${taskId}`).toMatchObject({ ok: true });
    }
    for (const [id, { acknowledged, unknownAfter }] of load.versions) {
      const read = await call(clients[2]!, targets[2]!.url, 'GET', `/v1/checkpoints/${id}`);
      expect(read.status, `checkpoint ${id}`).toBe(200);
      const version = read.json.version as number;
      // A patch whose answer never came applied at most once after the last acknowledged one.
      expect(version, `version of ${id}`).toBeGreaterThanOrEqual(acknowledged);
      expect(version, `version of ${id}`).toBeLessThanOrEqual(acknowledged + (unknownAfter ? 1 : 0));
    }
    for (const [id, { hash, createdAt }] of load.promised) {
      const read = await call(clients[0]!, targets[0]!.url, 'GET', `/v1/checkpoints/${id}?version=1`);
      expect({ hash: (read.json.compliance as { hash?: string } | undefined)?.hash, createdAt: read.json.createdAt }, `queued checkpoint ${id} as its 202 promised`).toEqual({ hash, createdAt });
    }
    // Only the writes a scenario expects refused on replay are dead letters; every other queued write applied.
    const dead = (await deadLetters()).filter((d) => !started.dead.has(d.id));
    expect(dead.map((d) => [d.checkpointId, d.error.code])).toEqual(extra.dead ?? []);
    for (let i = 0; i < INSTANCES; i++) expect(fleet!.at(i).alive(), `instance ${i} runs`).toBe(true);
  }

  /** When a scenario starts, and the dead letters there were before it. */
  async function begin(): Promise<{ at: number; dead: Set<string> }> {
    return { at: Date.now(), dead: new Set((await deadLetters()).map((d) => d.id)) };
  }

  /** Cuts `node` (from `peer` only, when given) for `ms` while watching `instance`'s readiness; answers when it was cut and healed, and the samples. */
  async function cutFor(node: string, how: Cut, peer: string | undefined, ms: number, watch: { instance: number; through?: number }[]) {
    const cutAt = Date.now();
    topology!.cut(node, how, peer);
    const watchers = watch.map(({ instance, through }) => watchReadiness(instance, through));
    await sleep(ms);
    const samples = await Promise.all(watchers.map((w) => w.stop()));
    topology!.heal(node);
    return { cutAt, healedAt: Date.now(), samples };
  }

  /** How long after the cut readiness first said `degraded`; asserts it said so from then until the heal. */
  function degradedThroughout(samples: { at: number; status?: string }[], cutAt: number): { after: number } {
    const statuses = samples.map((s) => s.status);
    const first = statuses.indexOf('degraded');
    expect(first, `readiness while cut: ${JSON.stringify(statuses)}`).toBeGreaterThanOrEqual(0);
    expect(statuses.slice(first), `readiness while cut: ${JSON.stringify(statuses)}`).toEqual(statuses.slice(first).map(() => 'degraded'));
    return { after: samples[first]!.at - cutAt };
  }

  it('1. an instance cut from the cluster both ways mid-load: 202s replayed once, readiness degraded, its lease fenced', { timeout: 240_000 }, async () => {
    const started = await begin();
    const load = startLoad('s1');
    await sleep(3_000);

    // The cut instance's agent holds the fence task's lease and has written under it.
    const fenceTask = 's1-fence';
    const [cut, other] = [targets[0]!, targets[1]!];
    const lease = await call(cut.client, cut.url, 'POST', `/v1/tasks/${fenceTask}/lease`, { body: { agentId: 'fence-holder', ttlMs: LEASE_TTL_MS } });
    expect(lease.status).toBe(201);
    const epoch = lease.json.epoch as number;
    const leases: Recorded[] = [{ instance: 0, invokedAt: lease.invokedAt, op: { kind: 'lease', taskId: fenceTask, agentId: 'fence-holder', status: 201, epoch } }];
    const fenceHeaders = { 'baton-lease-epoch': String(epoch) };
    expect(await load.create(cut, fenceTask, 'fence-holder', -1, fenceHeaders)).toBeDefined();

    const cutAt = Date.now();
    topology!.cut('baton-0', 'both', 'fdb');
    const watcher = watchReadiness(0);
    // Written under the old epoch while cut off: the queue takes it, since only the store knows the task's lease.
    // It is not in the checked history: its 202 is followed, by design, by a refusal on replay (a dead letter, checked in `verify`).
    const late = await call(cut.client, cut.url, 'POST', '/v1/checkpoints', { body: { taskId: fenceTask, agentId: 'fence-holder' }, headers: fenceHeaders });
    expect(late.status, JSON.stringify(late.json)).toBe(202);
    const promised = late.json.checkpointId as string;
    // Another instance grants the lease once it has expired (plus the clock allowance), while the holder's instance is still cut off.
    let successor: number | undefined;
    while (successor === undefined) {
      const taken = await call(other.client, other.url, 'POST', `/v1/tasks/${fenceTask}/lease`, { body: { agentId: 'fence-successor', ttlMs: 60_000 } });
      const granted = taken.status === 201 ? (taken.json.epoch as number) : undefined;
      leases.push({ instance: 1, invokedAt: taken.invokedAt, op: { kind: 'lease', taskId: fenceTask, agentId: 'fence-successor', ...(taken.status !== undefined ? { status: taken.status } : {}), ...(granted !== undefined ? { epoch: granted } : {}) } });
      successor = granted;
      if (successor === undefined) {
        expect(taken.json.code, JSON.stringify(taken.json)).toBe('lease_held');
        expect(Date.now() - cutAt).toBeLessThan(LEASE_TTL_MS + 15_000);
        await sleep(250);
      }
    }
    expect(successor).toBeGreaterThan(epoch);
    await sleep(Math.max(0, CUT_MS - (Date.now() - cutAt)));
    const samples = await watcher.stop();
    topology!.heal('baton-0');
    const healedAt = Date.now();
    const replay = await settled();

    // After the heal, the cut instance's writes under the old epoch are refused.
    const refused = await call(cut.client, cut.url, 'POST', '/v1/checkpoints', { body: { taskId: fenceTask, agentId: 'fence-holder' }, headers: fenceHeaders });
    expect(refused.status).toBe(409);
    expect(refused.json.code).toBe('lease_superseded');
    await load.stop();
    await settled();
    expect((await call(clients[1]!, targets[1]!.url, 'GET', `/v1/checkpoints/${promised}`)).status).toBe(404);
    expect((await listed(fenceTask)).map((c) => c.id)).not.toContain(promised);

    const degraded = degradedThroughout(samples, cutAt);
    const queued = load.history.filter((r) => r.instance === 0 && r.op.status === 202 && r.invokedAt >= cutAt && r.invokedAt <= healedAt);
    expect(queued.length).toBeGreaterThan(0);
    const answerMs = queued.map((r) => r.answeredAt! - r.invokedAt).sort((a, b) => a - b);
    await verify('1 (an instance cut from the cluster, both ways)', load, 1, started, {
      history: leases,
      tasks: [fenceTask],
      dead: [[promised, 'lease_superseded']],
      note:
        `readiness degraded ${seconds(degraded.after)} after the cut and until the heal; ${queued.length} writes through it queued, ` +
        `answered 202 in ${seconds(answerMs[Math.floor(answerMs.length / 2)]!)} (median), ${seconds(answerMs[answerMs.length - 1]!)} (max); ${recovered(replay, [0])}; ` +
        `lease epoch ${epoch} fenced by epoch ${successor} granted through instance 1 while cut; its write queued under epoch ${epoch} dead-lettered lease_superseded, a live one refused 409 after the heal`,
    });
  });

  it('1b. an instance cut from the cluster one way (what it sends, then what it receives): 202s replayed once, readiness degraded', { timeout: 240_000 }, async () => {
    const started = await begin();
    const load = startLoad('s1b');
    await sleep(3_000);
    const cuts: { instance: number; how: Cut; cutAt: number; healedAt: number; degraded: { after: number }; replay: Awaited<ReturnType<typeof settled>> }[] = [];
    for (const [instance, how] of [
      [1, 'outbound'],
      [2, 'inbound'],
    ] as const) {
      const { cutAt, healedAt, samples } = await cutFor(`baton-${instance}`, how, 'fdb', CUT_MS, [{ instance }]);
      cuts.push({ instance, how, cutAt, healedAt, degraded: degradedThroughout(samples[0]!, cutAt), replay: await settled() });
    }
    await load.stop();
    await settled();
    for (const { instance, cutAt, healedAt } of cuts) expect(load.queued(instance, cutAt, healedAt), `202s from instance ${instance}`).toBeGreaterThan(0);
    await verify('1b (an instance cut from the cluster, one way)', load, cuts.length, started, {
      note: cuts
        .map(({ instance, how, cutAt, healedAt, degraded, replay }) => `${how}: instance ${instance} degraded ${seconds(degraded.after)} after the cut, ${load.queued(instance, cutAt, healedAt)} queued, ${recovered(replay, [instance])}`)
        .join('; '),
    });
  });

  it('2. an instance cut from its clients, not from the cluster: it stays ready, nothing queued, nothing lost', { timeout: 240_000 }, async () => {
    const started = await begin();
    const load = startLoad('s2');
    await sleep(3_000);
    const windows: { instance: number; how: string; cutAt: number; healedAt: number }[] = [];
    // One instance cut from its client both ways; then another whose answers to its client are dropped (the requests reach it and apply).
    for (const [instance, node, how, peer, name] of [
      [1, 'client-1', 'both', 'baton-1', 'both ways'],
      [2, 'baton-2', 'outbound', 'client-2', 'its answers only'],
    ] as const) {
      const { cutAt, healedAt, samples } = await cutFor(node, how, peer, CUT_MS, [{ instance, through: 0 }]);
      // Asked through another client: the instance reaches the store all along.
      expect(samples[0]!.map((s) => s.status)).toEqual(samples[0]!.map(() => 'ready'));
      windows.push({ instance, how: name, cutAt, healedAt });
      await settled();
    }
    await load.stop();
    await settled();
    const notes = windows.map(({ instance, how, cutAt, healedAt }) => {
      const cutOff = load.answers(instance, cutAt, healedAt);
      const others = targets.filter((t) => t.index !== instance).map((t) => load.answers(t.index, cutAt, healedAt).acknowledged);
      expect(cutOff.unanswered, `unanswered through instance ${instance} while cut (${how})`).toBeGreaterThan(0);
      expect(Math.min(...others), `acknowledged through the other instances while instance ${instance} was cut (${how})`).toBeGreaterThan(0);
      return `${how}: instance ${instance}'s client ${cutOff.unanswered} unanswered, the other instances ${others.join(' and ')} acknowledged`;
    });
    // The store answered every instance all along: nothing was queued.
    expect(load.history.filter((r) => r.op.status === 202)).toEqual([]);
    await verify('2 (an instance cut from its clients)', load, windows.length, started, { note: notes.join('; ') });
  });

  it('3. the cluster cut from every instance: all queue; heal; all replay', { timeout: 240_000 }, async () => {
    const started = await begin();
    const load = startLoad('s3');
    await sleep(3_000);
    const all = targets.map((t) => t.index);
    const { cutAt, healedAt, samples } = await cutFor(
      'fdb',
      'both',
      undefined,
      CUT_MS,
      all.map((instance) => ({ instance })),
    );
    const replay = await settled();
    await load.stop();
    await settled();
    const degraded = samples.map((s) => degradedThroughout(s, cutAt));
    for (const i of all) expect(load.queued(i, cutAt, healedAt), `202s from instance ${i}`).toBeGreaterThan(0);
    await verify('3 (the cluster cut from every instance)', load, 1, started, {
      note: `every instance degraded within ${seconds(Math.max(...degraded.map((d) => d.after)))} and until the heal, ${all.map((i) => load.queued(i, cutAt, healedAt)).join(' / ')} queued; ${recovered(replay, all)}`,
    });
  });

  it(`4. one instance's link flapping every ${FLAP_PERIOD_MS} ms for ${FLAP_MS / 1000} s while clients write`, { timeout: FLAP_MS + 240_000 }, async () => {
    const started = await begin();
    const load = startLoad('s4');
    await sleep(3_000);
    let cuts = 0;
    const until = Date.now() + FLAP_MS;
    while (Date.now() < until) {
      topology!.cut('baton-2');
      cuts++;
      await sleep(FLAP_PERIOD_MS);
      topology!.heal('baton-2');
      await sleep(FLAP_PERIOD_MS);
    }
    const replay = await settled();
    await load.stop();
    await settled();
    const { unanswered, acknowledged } = load.answers(2);
    await verify('4 (a flapping link)', load, cuts, started, {
      note: `through the flapping instance ${acknowledged} acknowledged (${load.queued(2)} queued), ${unanswered} unanswered; ${recovered(replay, [2])}`,
    });
  });
});
