/**
 * `baton watch DIR`: keeps the checkpoint files agents write in a project
 * directory in Baton. Every pass looks for the four formats' files —
 * `builder-state.json` (anywhere), `.pipeline/checkpoint-*.json`,
 * `*.xml` whose root is a workflow, approval or error checkpoint, and `*.md`
 * that open with front matter naming a `checkpoint:` — and imports each new
 * or changed one as a new checkpoint of its task. A file's Idempotency-Key is
 * its path and content digest, so a watcher restarted (or run twice) writes
 * nothing twice. A file that does not parse is reported once, until it
 * changes, and skipped; the watcher goes on. Files are read only once they
 * have stopped changing for the debounce time.
 *
 * The watcher reads each file with the same converters the server's import
 * uses (`src/formats/`), then records the SHA-256 of every file the
 * checkpoint names that exists in DIR (`{ path, sha256 }`), so a later
 * stale-check is exact, and sends the checkpoint as a create.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { CliError } from './errors.js';
import type { ServerOptions } from './http.js';
import type { CheckpointInput } from '../domain/checkpoint.js';
import { decodeUtf8, FORMATS, FormatError } from '../formats/index.js';
import { request, server } from './http.js';
import type { ImportFormat } from './transfer.js';

export interface WatchOptions extends ServerOptions {
  once: boolean;
  intervalMs: number;
  debounceMs: number;
  agentId?: string;
  /** The task of documents that name none (builder-state, workflow XML, markdown): default the directory's name. */
  taskId?: string;
}

/** Directories never looked into. */
const SKIP = new Set(['node_modules', '.git', 'dist']);
const MAX_DEPTH = 8;
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/** The format of a file by where it is and how it starts, or undefined when it is not a checkpoint file. */
export function formatOf(path: string, head: string): ImportFormat | undefined {
  const name = path.split(sep).pop() ?? path;
  if (name === 'builder-state.json') return 'builder-state';
  if (/(^|[\\/])\.pipeline[\\/]checkpoint-[^\\/]+\.json$/.test(path)) return 'pipeline';
  if (name.endsWith('.xml') && /<(workflow_checkpoint|approval_checkpoint|error_checkpoint)[\s>]/.test(head)) return 'workflow-xml';
  if (name.endsWith('.md') && /^---\r?\n[\s\S]*?^checkpoint\s*:/m.test(head)) return 'markdown';
  return undefined;
}

function* files(root: string, dir = root, depth = 0): Generator<string> {
  if (depth > MAX_DEPTH) return;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP.has(entry.name)) yield* files(root, path, depth + 1);
    } else if (entry.isFile() && /\.(json|xml|md)$/.test(entry.name)) {
      yield path;
    }
  }
}

interface Seen {
  digest: string;
  /** When the content was first seen as it is (for the debounce). */
  since: number;
  done: boolean;
}

type FileRefValue = string | { path: string; sha256?: string };

/** The checkpoint with `{ path, sha256 }` for each file it names that exists under `root` (a path it cannot read stays as it was). */
export function withFileHashes(input: CheckpointInput, root: string): CheckpointInput {
  const hashed = (ref: FileRefValue): FileRefValue => {
    const path = typeof ref === 'string' ? ref : ref.path;
    if (typeof ref !== 'string' && ref.sha256 !== undefined) return ref;
    const file = resolve(root, path);
    if (relative(root, file).startsWith('..')) return ref;
    try {
      if (!statSync(file).isFile()) return ref;
      return { ...(typeof ref === 'string' ? {} : ref), path, sha256: createHash('sha256').update(readFileSync(file)).digest('hex') };
    } catch {
      return ref;
    }
  };
  const items = (list: CheckpointInput['executionState'] extends infer S ? (S extends { completedItems?: infer I } ? I : never) : never) =>
    list?.map((item) => (typeof item === 'string' || item.files === undefined ? item : { ...item, files: Object.fromEntries(Object.entries(item.files).map(([change, refs]) => [change, Array.isArray(refs) ? refs.map((r) => hashed(r as FileRefValue)) : refs])) }));
  const state = input.executionState;
  const metrics = input.metrics;
  return {
    ...input,
    ...(state ? { executionState: { ...state, ...(state.completedItems ? { completedItems: items(state.completedItems) } : {}), ...(state.pendingItems ? { pendingItems: items(state.pendingItems) } : {}), ...(state.blockedItems ? { blockedItems: items(state.blockedItems) } : {}) } } : {}),
    ...(metrics?.filesModified ? { metrics: { ...metrics, filesModified: metrics.filesModified.map((r) => hashed(r as FileRefValue)) } } : {}),
  } as CheckpointInput;
}

/** Creates the checkpoint; answers it (or the first answer, for a repeat of the same key). */
async function createCheckpoint(input: CheckpointInput, idempotencyKey: string, options: ServerOptions): Promise<{ checkpoint: { id: string; taskId: string }; replayed: boolean }> {
  const response = await request(server(options), 'POST', '/v1/checkpoints', { body: JSON.stringify(input), headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey } });
  return { checkpoint: (await response.json()) as { id: string; taskId: string }, replayed: response.headers.get('idempotent-replayed') === 'true' };
}

export class Watcher {
  private readonly seen = new Map<string, Seen>();

  constructor(
    private readonly root: string,
    private readonly options: WatchOptions,
    private readonly say: (line: string) => void = (line) => console.log(line),
  ) {}

  /** One pass over the directory; answers how many checkpoints it wrote. */
  async pass(now = Date.now()): Promise<number> {
    let written = 0;
    for (const path of files(this.root)) {
      const rel = relative(this.root, path);
      let data: Buffer;
      try {
        if (statSync(path).size > MAX_FILE_BYTES) continue;
        data = readFileSync(path);
      } catch {
        continue;
      }
      const format = formatOf(rel, data.subarray(0, 4096).toString('utf8'));
      if (format === undefined) continue;
      const digest = createHash('sha256').update(rel).update('\0').update(data).digest('hex');
      const seen = this.seen.get(rel);
      if (seen?.digest === digest && seen.done) continue;
      if (seen?.digest !== digest) {
        this.seen.set(rel, { digest, since: now, done: false });
        // A file still being written waits for the next pass, unless this is the only one.
        if (!this.options.once && this.options.debounceMs > 0) continue;
      } else if (!this.options.once && now - seen.since < this.options.debounceMs) {
        continue;
      }
      const entry = this.seen.get(rel)!;
      let input: CheckpointInput;
      try {
        input = FORMATS[format].parse(decodeUtf8(data), {
          ...(format === 'pipeline' ? {} : { taskId: this.options.taskId ?? (this.root.split(sep).filter(Boolean).pop() ?? 'project') }),
          ...(this.options.agentId ? { agentId: this.options.agentId } : {}),
        });
      } catch (error) {
        if (!(error instanceof FormatError)) throw error;
        entry.done = true;
        this.say(`${rel}: skipped, validation_failed: ${error.toFieldError().field}: ${error.toFieldError().message}`);
        continue;
      }
      try {
        const { checkpoint, replayed } = await createCheckpoint(withFileHashes(input, this.root), `watch:${digest.slice(0, 48)}`, this.options);
        entry.done = true;
        if (!replayed) {
          written += 1;
          this.say(`${rel}: checkpoint ${checkpoint.id} of task ${checkpoint.taskId}`);
        }
      } catch (error) {
        if (!(error instanceof CliError) || error.exitCode !== 5) throw error;
        // Reported once per content: the same broken file is not reported again until it changes.
        entry.done = true;
        this.say(`${rel}: skipped, ${error.message}`);
      }
    }
    return written;
  }

  async run(): Promise<void> {
    for (;;) {
      await this.pass();
      if (this.options.once) return;
      await new Promise((resolve) => setTimeout(resolve, this.options.intervalMs));
    }
  }
}
