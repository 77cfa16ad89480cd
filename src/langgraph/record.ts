/**
 * How a LangGraph checkpoint is laid out in a Baton checkpoint: the pure
 * half of the adapter, with no I/O. Everything LangGraph's serializer makes
 * is bytes, kept as base64 in JSON so any value survives the trip (see
 * docs/langgraph.md); what Baton must search on is also copied into labels.
 *
 * @module
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import type { CheckpointMetadata, SerializerProtocol } from '@langchain/langgraph-checkpoint';
import type { Checkpoint as BatonCheckpoint } from '../client/types.js';

/** Serializer output: its type tag and its bytes as base64. */
export type Blob = [type: string, base64: string];

/** Where a channel's value lives: `null` for this checkpoint, else the Baton id of the one that wrote it; and its version. */
export type ChannelRef = [batonId: string | null, version: string | number];

/** One pending write: task id, channel, value, task path. */
export type StoredWrite = [taskId: string, channel: string, value: Blob, taskPath: string];

/** The `extensions.langgraph` member of a Baton checkpoint. */
export interface LangGraphRecord {
  /** The checkpoint without its channel values. */
  checkpoint: Blob;
  metadata: Blob;
  /** Values of the channels this checkpoint changed (those in `newVersions`); `empty` marks a channel cleared. */
  blobs: Record<string, Blob>;
  /** Every channel of `channel_versions` whose value is stored somewhere: here or in an ancestor. */
  index: Record<string, ChannelRef>;
  /** Pending writes by `"<taskId>,<idx>"`, the key LangGraph's savers use. */
  writes?: Record<string, StoredWrite>;
}

/** The blob type that marks a channel with no value. */
export const EMPTY = 'empty';

export const LABEL = { id: 'lg.id', ns: 'lg.ns', parent: 'lg.parent', meta: 'lg.meta.' } as const;

/** Label names Baton accepts, and the longest label value. */
const LABEL_NAME = /^[A-Za-z0-9_.\-/]{1,100}$/;
const LABEL_VALUE_MAX = 1000;

export async function dump(serde: SerializerProtocol, value: unknown): Promise<Blob> {
  const [type, bytes] = await serde.dumpsTyped(value);
  return [type, Buffer.from(bytes).toString('base64')];
}

export function load(serde: SerializerProtocol, [type, base64]: Blob): Promise<unknown> {
  return serde.loadsTyped(type, new Uint8Array(Buffer.from(base64, 'base64')));
}

/** The label a metadata entry is searchable by, or undefined when Baton cannot index it (the filter then runs here). */
export function metadataLabel(key: string, value: unknown): [string, string | number | boolean] | undefined {
  const name = `${LABEL.meta}${key}`;
  if (!LABEL_NAME.test(name)) return undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return [name, value];
  if (typeof value === 'boolean') return [name, value];
  if (typeof value === 'string' && value.length <= LABEL_VALUE_MAX) return [name, value];
  return undefined;
}

/** The labels of a LangGraph checkpoint: its id, namespace, parent, and the metadata Baton can index. */
export function labelsOf(checkpointId: string, ns: string, parentId: string | undefined, metadata: CheckpointMetadata): Record<string, string | number | boolean> {
  const labels: Record<string, string | number | boolean> = { [LABEL.id]: checkpointId, [LABEL.ns]: ns };
  if (parentId !== undefined) labels[LABEL.parent] = parentId;
  for (const [key, value] of Object.entries(metadata ?? {})) {
    const label = metadataLabel(key, value);
    if (label !== undefined) labels[label[0]] = label[1];
  }
  return labels;
}

/** LangGraph's index of a write: special channels (errors, interrupts, …) have fixed negative ones. */
export function writeKey(taskId: string, idx: number): string {
  return `${taskId},${idx}`;
}

/** Pending writes in LangGraph's order: task path, task id, index. */
export function orderedWrites(writes: Record<string, StoredWrite>): { key: string; write: StoredWrite; idx: number }[] {
  const entries = Object.entries(writes).map(([key, write]) => ({ key, write, idx: Number(key.slice(key.lastIndexOf(',') + 1)) }));
  entries.sort((a, b) => cmp(a.write[3], b.write[3]) || cmp(a.write[0], b.write[0]) || a.idx - b.idx);
  return entries;
}

/** Code-point order, as LangGraph's `compareWritesSortKeys` (Python's string order). */
function cmp(a: string, b: string): number {
  if (a === b) return 0;
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return Math.sign(d);
  }
  return Math.sign(x.length - y.length);
}

export interface Where {
  threadId: string;
  ns: string;
}

export function where(config: RunnableConfig, method: string): Where {
  const threadId = config.configurable?.thread_id as string | undefined;
  if (threadId === undefined || threadId === null) throw new Error(`${method} needs configurable.thread_id.`);
  return { threadId: String(threadId), ns: (config.configurable?.checkpoint_ns as string | undefined) ?? '' };
}

export function recordOrNot(doc: BatonCheckpoint): LangGraphRecord | undefined {
  const record = doc.extensions?.langgraph as LangGraphRecord | undefined;
  return record && typeof record === 'object' && Array.isArray(record.checkpoint) ? record : undefined;
}

export function recordOf(doc: BatonCheckpoint): LangGraphRecord {
  const record = recordOrNot(doc);
  if (record === undefined) throw new Error('The Baton checkpoint holds no LangGraph checkpoint.');
  return record;
}
