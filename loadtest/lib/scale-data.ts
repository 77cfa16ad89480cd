/**
 * The growth benchmark's data set and the reads over it. Checkpoint `n` of a
 * store of T tasks belongs to task `n % T`, so each task gets about N / T
 * checkpoints, written interleaved as many agents would. Bodies are the HTTP
 * benchmark's realistic ones (`checkpointBody`) with some fields made to vary,
 * so that each search has a selective and an unselective case:
 *
 *   agentId      64 agents, skewed: agent-0 writes ~25 %, agent-3 ~4 %, agent-60..63 ~0.5 % each
 *   labels       epic-0..9 by task (10 % each); run = n (one checkpoint each); team = platform (all)
 *   files        src/store/keyspace.ts and three more in every checkpoint; docs/tasks/<task>.md in its task's only
 *   words        "fencing", "sweeper", "orchestrator", "epoch" in every checkpoint;
 *                "deadlock", "livelock", "heisenbug", "backpressure" each in ~1 in 1,000 (a blocked item)
 *
 * Every choice is a hash of `n`, so the reads know what exists without asking.
 *
 * @module
 */
import { HISTORY_LIMIT } from './http-config.js';
import { checkpointBody } from './http-payloads.js';
import { SEARCH_LIMIT } from './scale-config.js';

/** What a store holds: the reads choose their tasks and values from it. */
export interface StoreShape {
  tasks: number;
  /** Checkpoints loaded with `scaleBody` (creates measured later come on top). */
  checkpoints: number;
}

export const scaleTaskId = (t: number): string => `scale-task-${String(t).padStart(5, '0')}`;

/** A 32-bit integer hash of `(n, salt)` (murmur3's finalizer): evenly spread, the same on every run. */
export function mix(n: number, salt: number): number {
  let x = Math.imul(n ^ Math.imul(salt, 0x9e3779b9), 0x85ebca6b) ^ salt;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

const unit = (n: number, salt: number): number => mix(n, salt) / 2 ** 32;

const AGENTS = 64;
const EPICS = 10;
/** Files every body names (its items' and `metrics.filesModified`). */
const COMMON_FILES = ['src/store/keyspace.ts', 'src/errors.ts', 'src/store/leases.ts', 'src/service/task-write.ts'];
const COMMON_WORDS = ['fencing', 'sweeper', 'orchestrator', 'epoch'];
const RARE_WORDS = ['deadlock', 'livelock', 'heisenbug', 'backpressure'];
/** One body in RARE_EVERY has a blocked item with one of the rare words. */
const RARE_EVERY = 250;

/** Cubing a uniform number skews it towards 0: agent-0 gets (1/64)^(1/3) ≈ 25 % of the checkpoints. */
const agentOf = (n: number): string => `agent-${Math.min(AGENTS - 1, Math.floor(AGENTS * unit(n, 1) ** 3))}`;
const taskFile = (task: string): string => `docs/tasks/${task}.md`;

interface Body {
  agentId: string;
  labels: Record<string, string | number>;
  executionState: { blockedItems: unknown[] };
  metrics: { filesModified: string[] };
}

/** The body of checkpoint `n` of a store of `tasks` tasks, about 2.3 KB. */
export function scaleBody(n: number, tasks: number): string {
  const t = n % tasks;
  const task = scaleTaskId(t);
  const body = JSON.parse(checkpointBody(task, n)) as Body;
  body.agentId = agentOf(n);
  body.labels.epic = `epic-${t % EPICS}`;
  body.metrics.filesModified.push(taskFile(task));
  if (mix(n, 2) % RARE_EVERY === 0) {
    const word = RARE_WORDS[mix(n, 3) % RARE_WORDS.length]!;
    body.executionState.blockedItems.push({ id: 'blocker-1', description: `Suspected ${word} in the commit path under load`, blocker: 'needs a reproduction' });
  }
  return JSON.stringify(body);
}

/** One read figure: request `i` goes to `path(i)`; searches count their items and short pages. */
export interface ReadScenario {
  key: string;
  name: string;
  kind: 'history' | 'latest' | 'search';
  path: (i: number) => string;
}

/** The read figures measured on both stores, in the order they run. */
export function readScenarios(shape: StoreShape): ReadScenario[] {
  // Requests go to tasks and values spread by a hash, not in order, so that most of a run's requests meet a different task.
  const task = (i: number, salt: number): string => scaleTaskId(mix(i, salt) % shape.tasks);
  const search = (key: string, name: string, filter: (i: number) => string): ReadScenario => ({
    key,
    name,
    kind: 'search',
    path: (i) => `/v1/checkpoints?${filter(i)}&limit=${SEARCH_LIMIT}`,
  });
  const q = encodeURIComponent;
  return [
    { key: 'history', name: `history(${HISTORY_LIMIT})`, kind: 'history', path: (i) => `/v1/tasks/${task(i, 10)}/checkpoints?limit=${HISTORY_LIMIT}` },
    { key: 'latest', name: 'latest', kind: 'latest', path: (i) => `/v1/tasks/${task(i, 11)}/checkpoints/latest` },
    search('agentCommon', 'search agent, common (4-25 %)', (i) => `agentId=agent-${i % 4}`),
    search('agentRare', 'search agent, rare (~0.5 %)', (i) => `agentId=agent-${AGENTS - 4 + (i % 4)}`),
    search('labelCommon', 'search label, common (10 %)', (i) => `label.epic=epic-${i % EPICS}`),
    search('labelRare', 'search label, rare (1 match)', (i) => `label.run=${mix(i, 12) % shape.checkpoints}`),
    search('fileCommon', 'search file, common (all)', (i) => `file=${q(COMMON_FILES[i % COMMON_FILES.length]!)}`),
    search('fileRare', `search file, rare (~${Math.round(shape.checkpoints / shape.tasks)} matches)`, (i) => `file=${q(taskFile(task(i, 13)))}`),
    search('qCommon', 'search q, common word (all)', (i) => `q=${COMMON_WORDS[i % COMMON_WORDS.length]}`),
    search('qRare', 'search q, rare word (~0.1 %)', (i) => `q=${RARE_WORDS[i % RARE_WORDS.length]}`),
  ];
}
