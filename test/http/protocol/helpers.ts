/** Small request helpers shared by the protocol tests (inject, writer token unless told). */
import { expect } from 'vitest';
import { decodeValue, encodeValue, tenantKeyspace } from '../../../src/store/keyspace.js';
import { decompress } from '../../../src/service/repository/compression.js';
import { auth, checkpointBody, type TestApp, type Who } from '../../support/app.js';
import type { Json } from '../../support/problems.js';

export interface Call {
  statusCode: number;
  headers: Record<string, unknown>;
  json(): unknown;
  body: string;
}

export function call(t: TestApp, method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: Json, headers: Record<string, string> = {}, who: Who = 'writer'): Promise<Call> {
  return t.app.inject({ method, url, headers: { ...auth(who), ...headers }, ...(payload !== undefined ? { payload } : {}) }) as Promise<Call>;
}

export async function ok(t: TestApp, method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: Json, headers: Record<string, string> = {}, status = 200): Promise<Json> {
  const res = await call(t, method, url, payload, headers);
  expect(res.statusCode, res.body).toBe(status);
  return res.json() as Json;
}

export async function create(t: TestApp, taskId: string, extra: Json = {}, headers: Record<string, string> = {}): Promise<Json> {
  return ok(t, 'POST', '/v1/checkpoints', checkpointBody(taskId, extra), headers, 201);
}

/** The types of a task's events, in commit order. */
export async function eventTypes(t: TestApp, taskId: string): Promise<string[]> {
  const page = await ok(t, 'GET', '/v1/events?limit=1000');
  return (page.items as { type: string; data: { taskId: string } }[]).filter((e) => e.data.taskId === taskId).map((e) => e.type);
}

export const epoch = (n: number): Record<string, string> => ({ 'baton-lease-epoch': String(n) });

export async function until(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('The condition did not hold in time.');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Changes the stored canonical JSON of a checkpoint's current version, keeping its old hash: it no longer verifies. */
export async function tamper(t: TestApp, cp: Json): Promise<void> {
  const key = tenantKeyspace('default').checkpoints.pack(String(cp.taskId), String(cp.id), 0);
  await t.store.transact(async (tx) => {
    const bytes = await tx.get(key);
    expect(bytes).toBeDefined();
    const record = decodeValue<{ c: string; h: string }>(decompress(Buffer.from(bytes!)));
    tx.set(key, encodeValue({ ...record, c: record.c.replace('"agent', '"Agent') }));
  });
}
