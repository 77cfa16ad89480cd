/**
 * Import and export over HTTP (DESIGN §3 "Interchange formats"): every seed
 * example goes in through `POST /v1/import` and comes back out of
 * `GET /v1/checkpoints/:id/export` equal; a checkpoint made through the JSON
 * API exports to every format; broken documents are 400s naming the fault
 * and write nothing.
 */
import { describe, expect, it } from 'vitest';
import { EXPORT_FORMAT_NAMES } from '../../../src/formats/index.js';
import { canonicalXml, fixture, markdownSections } from '../../formats/support.js';
import { auth, checkpointBody, useTestApp, type TestApp } from '../../support/app.js';
import { expectProblem, type Json } from '../../support/problems.js';

function importDoc(t: TestApp, query: string, contentType: string, body: string | Buffer, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'POST', url: `/v1/import?${query}`, headers: { ...auth(), 'content-type': contentType, ...headers }, payload: body });
}

async function exported(t: TestApp, id: unknown, format: string): Promise<{ body: string; type: string }> {
  const res = await t.app.inject({ method: 'GET', url: `/v1/checkpoints/${String(id)}/export?format=${format}`, headers: auth() });
  expect(res.statusCode, res.body).toBe(200);
  return { body: res.body, type: String(res.headers['content-type']) };
}

async function roundTrip(t: TestApp, query: string, contentType: string, document: string, format: string): Promise<{ checkpoint: Json; body: string; type: string }> {
  const res = await importDoc(t, query, contentType, document);
  expect(res.statusCode, res.body).toBe(201);
  const checkpoint = (res.json() as Json).checkpoint as Json;
  expect(res.headers.location).toBe(`/v1/checkpoints/${checkpoint.id}`);
  // The imported checkpoint is an ordinary one: it reads back with the same hash.
  const read = await t.app.inject({ method: 'GET', url: `/v1/checkpoints/${checkpoint.id}`, headers: auth() });
  expect((read.json() as Json).compliance).toEqual(checkpoint.compliance);
  return { checkpoint, ...(await exported(t, checkpoint.id, format)) };
}

describe('import and export', () => {
  const app = useTestApp();

  it('builder-state: the seed example comes back deep-equal', async () => {
    const doc = fixture('seed-000-builder-state.json');
    const out = await roundTrip(app(), 'format=builder-state&taskId=task-b', 'application/json', doc, 'builder-state');
    expect(out.type).toMatch(/^application\/json/);
    expect(JSON.parse(out.body)).toEqual(JSON.parse(doc));
    expect(out.checkpoint.taskId).toBe('task-b');
  });

  it('pipeline: the storyId is the task, and the document comes back deep-equal', async () => {
    const doc = fixture('seed-002-pipeline-stage3.json');
    const story = (JSON.parse(doc) as { storyId: string }).storyId;
    const out = await roundTrip(app(), 'format=pipeline', 'application/json', doc, 'pipeline');
    expect(out.checkpoint.taskId).toBe(story);
    expect(JSON.parse(out.body)).toEqual(JSON.parse(doc));
  });

  it.each(['seed-003-workflow-corrected.xml', 'seed-003-approval.xml', 'seed-003-error.xml'])('workflow-xml: %s comes back equal after canonical whitespace', async (name) => {
    const doc = fixture(name);
    const out = await roundTrip(app(), 'format=workflow-xml&taskId=task-x', 'application/xml', doc, 'workflow-xml');
    expect(out.type).toMatch(/^application\/xml/);
    expect(canonicalXml(out.body)).toBe(canonicalXml(doc));
  });

  it('markdown: the seed example comes back section by section', async () => {
    const doc = fixture('seed-004-structure.md');
    const out = await roundTrip(app(), 'format=markdown&taskId=task-m', 'text/markdown', doc, 'markdown');
    expect(out.type).toMatch(/^text\/markdown/);
    expect(markdownSections(out.body)).toEqual(markdownSections(doc));
  });

  it('exports a checkpoint made through the JSON API to every format', async () => {
    const t = app();
    const res = await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('task-any') });
    const id = (res.json() as Json).id;
    for (const format of EXPORT_FORMAT_NAMES) {
      const out = await exported(t, id, format);
      expect(out.body.length, format).toBeGreaterThan(0);
    }
  });

  it('refuses broken or mismatched documents with a 400 or 415 that names the fault, and writes nothing', async () => {
    const t = app();
    const broken = await importDoc(t, 'format=workflow-xml&taskId=task-bad', 'application/xml', fixture('seed-003-workflow.xml'));
    const problem = expectProblem(broken, 400, 'validation_failed');
    expect((problem.errors as { field: string }[])[0]!.field).toMatch(/line \d+/);
    expectProblem(await importDoc(t, 'format=builder-state&taskId=task-bad', 'application/json', '{"checkpoint": '), 400, 'validation_failed');
    expectProblem(await importDoc(t, 'format=builder-state&taskId=task-bad', 'application/json', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), 400, 'validation_failed');
    expectProblem(await importDoc(t, 'format=markdown&taskId=task-bad', 'application/xml', fixture('seed-004-structure.md')), 415, 'unsupported_media_type');
    expectProblem(await importDoc(t, 'format=yaml&taskId=task-bad', 'application/json', '{}'), 400, 'validation_failed');
    const bomb = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]><workflow_checkpoint>&lol2;</workflow_checkpoint>`;
    expectProblem(await importDoc(t, 'format=workflow-xml&taskId=task-bad', 'application/xml', bomb), 400, 'validation_failed');
    const missingTask = await importDoc(t, 'format=markdown', 'text/markdown', fixture('seed-004-structure.md'));
    expect(missingTask.statusCode).toBe(400);
    const task = await t.app.inject({ method: 'GET', url: '/v1/tasks/task-bad', headers: auth() });
    expectProblem(task, 404, 'not_found');
    expectProblem(await t.app.inject({ method: 'GET', url: '/v1/checkpoints/00000000-0000-7000-8000-000000000000/export?format=markdown', headers: auth() }), 404, 'not_found');
  });

  it('answers a retried import with the same Idempotency-Key with the first checkpoint', async () => {
    const t = app();
    const doc = fixture('seed-000-builder-state.json');
    const first = await importDoc(t, 'format=builder-state&taskId=task-i', 'application/json', doc, { 'idempotency-key': 'import-1' });
    const again = await importDoc(t, 'format=builder-state&taskId=task-i', 'application/json', doc, { 'idempotency-key': 'import-1' });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expectProblem(await importDoc(t, 'format=builder-state&taskId=task-i', 'application/json', doc.replace('"', ' "'), { 'idempotency-key': 'import-1' }), 422, 'idempotency_key_reused');
  });
});
