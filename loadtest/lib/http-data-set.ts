/**
 * The data the HTTP scenarios run over, created through Baton's API before
 * any run: checkpoints to read, checkpoints to patch, and a few long task
 * histories; then sanity checks that the server answers what the scenarios
 * expect, so that a broken setup fails here rather than as odd figures.
 *
 * @module
 */
import { GET_CHECKPOINTS, HISTORY_LIMIT, HISTORY_PER_TASK, HISTORY_TASKS, PATCH_CHECKPOINTS, PREP_CONCURRENCY } from './http-config.js';
import { call, concurrently, createCheckpoint, versionOf } from './http-client.js';
import { historyTaskId, taskId } from './http-payloads.js';
import type { Slot } from './patch-scenario.js';

export interface DataSet {
  /** Ids of the GET_CHECKPOINTS checkpoints the read scenarios cycle through. */
  readIds: string[];
  /** The PATCH_CHECKPOINTS checkpoints of the patch scenario, with their versions. */
  patchSlots: Slot[];
  /** A checkpoint as Baton's GET returns it: the bare server is seeded with it. */
  getPayload: string;
  /** A history page of HISTORY_LIMIT items, as Baton returns it. */
  historyPage: string;
  /** Checkpoints created. */
  checkpoints: number;
  /** Wall time of the setup. */
  seconds: number;
}

/** Creates the data set on Baton at `batonUrl` and gives the bare server at `bareUrl` the same GET payload. */
export async function setUpDataSet(batonUrl: string, bareUrl: string): Promise<DataSet> {
  const prepStarted = performance.now();
  const readable = await concurrently(GET_CHECKPOINTS, PREP_CONCURRENCY, (i) => createCheckpoint(batonUrl, taskId(i)));
  const readIds = readable.map((c) => c.id);
  const patchSlots: Slot[] = (await concurrently(PATCH_CHECKPOINTS, PREP_CONCURRENCY, (i) => createCheckpoint(batonUrl, taskId(i)))).map(
    ({ id, version }) => ({ id, version }),
  );
  await concurrently(HISTORY_TASKS * HISTORY_PER_TASK, PREP_CONCURRENCY, (i) => createCheckpoint(batonUrl, historyTaskId(i % HISTORY_TASKS)));
  // Sanity: a history page holds 100 items; a read answers with an ETag.
  const page = await call(`${batonUrl}/v1/tasks/${historyTaskId(0)}/checkpoints?limit=${HISTORY_LIMIT}`);
  const items = page.status === 200 ? (JSON.parse(page.body) as { items: unknown[] }).items.length : -1;
  if (items !== HISTORY_LIMIT) throw new Error(`Setup: the history page answered ${page.status} with ${items} items: ${page.body.slice(0, 300)}`);
  const sample = await call(`${batonUrl}/v1/checkpoints/${readIds[0]}`);
  if (sample.status !== 200 || versionOf(sample.etag) === undefined) throw new Error(`Setup: a read answered ${sample.status}, ETag ${sample.etag}`);
  // Give the bare GET route the same response payload: a real checkpoint as Baton returns it.
  const seeded = await call(`${bareUrl}/v1/checkpoints`, { method: 'POST', body: sample.body });
  if (seeded.status !== 201) throw new Error(`Setup: the bare server answered ${seeded.status}`);
  return {
    readIds,
    patchSlots,
    getPayload: sample.body,
    historyPage: page.body,
    checkpoints: GET_CHECKPOINTS + PATCH_CHECKPOINTS + HISTORY_TASKS * HISTORY_PER_TASK,
    seconds: (performance.now() - prepStarted) / 1000,
  };
}
