/** What every API test checks of an error answer: RFC 9457 problem+json with the expected status and code. */
import { expect } from 'vitest';

export type Json = Record<string, unknown>;

export interface Res {
  statusCode: number;
  headers: Record<string, unknown>;
  json(): unknown;
}

export function expectProblem(res: Res, status: number, code: string): Json {
  expect(res.statusCode).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  const body = res.json() as Json;
  expect(body).toMatchObject({ status, code });
  expect(typeof body.detail).toBe('string');
  return body;
}
