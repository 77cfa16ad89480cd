/**
 * The HTTP benchmark's own requests outside the measured load: creating the
 * data set before the runs (fetch, a bounded number at a time), sanity
 * checks, re-reading versions. Also the headers every request carries.
 *
 * @module
 */
import { uniqueCheckpointBody } from './http-payloads.js';
import { TOKEN } from './http-config.js';

export const authHeaders = { authorization: `Bearer ${TOKEN}` };

/** One gauge or counter of a server's /metrics, labels or none (NaN when it has none of that name). */
export async function serverMetric(server: { url: string }, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: authHeaders })).text();
  return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}
export const jsonHeaders = { ...authHeaders, 'content-type': 'application/json' };

export async function call(url: string, init: RequestInit = {}): Promise<{ status: number; etag: string | null; body: string }> {
  const response = await fetch(url, { ...init, headers: { ...jsonHeaders, ...(init.headers as Record<string, string> | undefined) } });
  return { status: response.status, etag: response.headers.get('etag'), body: await response.text() };
}

/** Runs `work(i)` for i < n, `concurrency` at a time. */
export async function concurrently<T>(n: number, concurrency: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(n);
  let next = 0;
  const loop = async (): Promise<void> => {
    for (let i = next++; i < n; i = next++) results[i] = await work(i);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, loop));
  return results;
}

export interface Created {
  id: string;
  version: number;
  body: string;
}

export async function createCheckpoint(base: string, task: string): Promise<Created> {
  const response = await call(`${base}/v1/checkpoints`, { method: 'POST', body: uniqueCheckpointBody(task) });
  if (response.status !== 201) throw new Error(`Setup: creating a checkpoint answered ${response.status}: ${response.body.slice(0, 500)}`);
  const parsed = JSON.parse(response.body) as { id: string; version: number };
  return { id: parsed.id, version: parsed.version, body: response.body };
}

/** The version an ETag carries (`"7"`, `W/"7"` or `7`), or undefined when it carries none. */
export function versionOf(etag: string | null | undefined): number | undefined {
  const match = /^(?:W\/)?"?(\d+)"?$/.exec(etag ?? '');
  return match ? Number(match[1]) : undefined;
}
