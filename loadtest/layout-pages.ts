/**
 * What a lone create's commit would cost under a task-local key layout,
 * against the layout of today, measured on LMDB itself before the layout is
 * built (issue 44; `docs/performance.md`, "The task-local layout, measured
 * before it is built"). No Baton runs here: the keys a create writes are
 * packed as the keyspace packs them (`src/store/keyspace.ts`), their values
 * the sizes a create's are, and each layout fills its own environment with
 * BENCH_LAYOUT_TASKS × BENCH_LAYOUT_PER_TASK checkpoints before 400 lone
 * commits of one checkpoint each, a task after another.
 *
 *   spaces      ("cp", task, id), ("hist", task, seq), ("aud", task, seq),
 *               ("task", task), ("ix", "task", task, at, id): the layout of
 *               stores created before format 9
 *   task        ("tk", task, "a", seq), ("tk", task, "c", id),
 *               ("tk", task, "h", seq), ("tk", task, "i", at, id),
 *               ("tk", task, "t"): store format 9's layout as built
 *               (`tenantKeyspace(tenant, 'task')`)
 *   interleaved ("tk", task, seq, "c" | "h" | "a" | "i") and the head at
 *               ("tk", task, true), after every seq of its task: a layout
 *               measured, not built (records keyed by their history slot)
 *
 * Both write the same ("id", id), ("ix", "all", at, id), ("tq", at, id,
 * task) and ("ev", stamp). Prints each commit's p50 and p90 and the pages
 * it wrote (the `write` bytes of /proc/self/io over 4 KB); nothing asserts.
 *
 *   npx tsx loadtest/layout-pages.ts
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { open } from 'lmdb';
import { runMain, TempDirs } from './lib/cleanup.js';
import { tenantKeyspace } from '../src/store/keyspace.js';

const TASKS = Number(process.env.BENCH_LAYOUT_TASKS ?? 1_000);
const PER_TASK = Number(process.env.BENCH_LAYOUT_PER_TASK ?? 25);
const COMMITS = 400;
type Layout = 'spaces' | 'task' | 'interleaved';

const ks = tenantKeyspace('default', 'spaces');
const built = tenantKeyspace('default', 'task');
const taskLocal = ks.root.at('tk');
const value = (bytes: number): Buffer => randomBytes(bytes);
const idOf = (n: number): string => `0190${n.toString(16).padStart(8, '0')}-c3d4-7e5f-8a9b-${randomBytes(6).toString('hex')}`;
const timeOf = (n: number): string => new Date(1_760_000_000_000 + n * 7).toISOString();

/** The keys and values of checkpoint `n`, the `seq`th of task `task`, in `layout`. */
function rowsOf(layout: Layout, task: number, seq: number, n: number): [Buffer, Buffer][] {
  const taskId = `task-${task}`;
  const id = idOf(n);
  const at = timeOf(n);
  const shared: [Buffer, Buffer][] = [
    [ks.ids.pack(id), value(7)],
    [ks.index.pack('all', '', at, id), value(7)],
    [ks.pendingList.pack(at, id, taskId), value(156)],
    [ks.events.pack(n), value(300)],
  ];
  if (layout === 'spaces' || layout === 'task') {
    const spaces = layout === 'spaces' ? ks : built;
    return [
      ...shared,
      [spaces.checkpoints.pack(taskId, id, 0), value(507)],
      [spaces.history.pack(taskId, seq), value(38)],
      [spaces.audit.pack(taskId, seq), value(412)],
      [spaces.tasks.pack(taskId, 0), value(268)],
      [spaces.index.pack('task', taskId, at, id), value(7)],
    ];
  }
  return [
    ...shared,
    [taskLocal.pack(taskId, seq, 'c'), value(507)],
    [taskLocal.pack(taskId, seq, 'h'), value(38)],
    [taskLocal.pack(taskId, seq, 'a'), value(412)],
    [taskLocal.pack(taskId, seq, 'i'), value(7)],
    [taskLocal.pack(taskId, true), value(268)],
  ];
}

function writtenBytes(): number {
  return Number(/^wchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? 0);
}

const tempDirs = new TempDirs('baton-layout');

async function measure(layout: Layout): Promise<string> {
  const env = open({ path: tempDirs.make(layout), maxDbs: 4, mapSize: 8 * 1024 ** 3, overlappingSync: false, noSync: false, compression: false });
  const db = env.openDB<Buffer, Buffer>({ name: 'data', keyEncoding: 'binary', encoding: 'binary' });
  const seqs = new Array<number>(TASKS).fill(0);
  let n = 0;
  for (let round = 0; round < PER_TASK; round++) {
    await env.batch(() => {
      for (let task = 0; task < TASKS; task++) for (const [key, row] of rowsOf(layout, task, ++seqs[task]!, ++n)) void db.put(key, row);
    });
  }
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < COMMITS; i++) {
    const task = (i * 37) % TASKS;
    const rows = rowsOf(layout, task, ++seqs[task]!, ++n);
    const before = writtenBytes();
    const start = process.hrtime.bigint();
    await env.batch(() => {
      for (const [key, row] of rows) void db.put(key, row);
    });
    times.push(Number(process.hrtime.bigint() - start) / 1e3);
    bytes += writtenBytes() - before;
  }
  await env.close();
  times.sort((a, b) => a - b);
  const p = (q: number): string => times[Math.floor(q * times.length)]!.toFixed(0);
  return `${layout.padEnd(11)}  ${String(TASKS * PER_TASK).padStart(9)}  ${p(0.5).padStart(8)}  ${p(0.9).padStart(8)}  ${(bytes / COMMITS / 4096).toFixed(1).padStart(6)}`;
}

runMain(async () => {
  console.log(`layout       checkpoints  p50 (µs)  p90 (µs)  pages   (a lone create's commit, ${COMMITS} commits, two rounds)`);
  for (let round = 0; round < 2; round++) for (const layout of ['spaces', 'task', 'interleaved'] as const) console.log(await measure(layout));
}, () => tempDirs.removeAll());
