/**
 * proto/baton/v1/*.proto is the language-neutral schema of the checkpoint,
 * the protocol's requests and records, and the events: compiled by `protoc`
 * here (skipped with the reason where it is not installed, unless
 * BATON_REQUIRE_PROTOC=1 as in CI), and kept equal to the zod schemas field
 * by field: every field a zod object has, its message has (by protobuf's JSON
 * name, the API's camelCase), and every message field is one the schema has.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkpointInput, complianceInput, contextSummary, executionState, metrics, recovery } from '../../src/domain/checkpoint.js';
import { failureSchema, handoffBody, leaseBody, recoveryBody, successorBody } from '../../src/domain/requests.js';

const root = new URL('../../', import.meta.url).pathname;
const files = ['proto/baton/v1/checkpoint.proto', 'proto/baton/v1/protocol.proto'];
const protoc = ['/usr/bin/protoc', '/usr/local/bin/protoc'].find((path) => existsSync(path));
const required = process.env.BATON_REQUIRE_PROTOC === '1';

async function messages(): Promise<protobuf.Root> {
  const pb = new protobuf.Root();
  // google/protobuf/struct.proto is one of protobufjs's bundled common types.
  pb.resolvePath = (origin, target) => (target.startsWith('google/protobuf/') ? target : protobuf.util.path.resolve(origin, target));
  await pb.load(files.map((file) => join(root, file)), { keepCase: false });
  pb.resolveAll();
  return pb;
}

/** The field names of a zod object (through optional, nullable and default wrappers). */
function fieldsOf(schema: z.ZodType): string[] {
  let current = schema as unknown as { def: { type: string; innerType?: z.ZodType }; shape?: Record<string, unknown> };
  while (current.shape === undefined && current.def.innerType !== undefined) current = current.def.innerType as unknown as typeof current;
  return Object.keys(current.shape ?? {}).sort();
}

function messageFields(pb: protobuf.Root, name: string): string[] {
  return Object.keys(pb.lookupType(`baton.v1.${name}`).fields).sort();
}

describe('proto/', () => {
  it.skipIf(protoc === undefined && !required)(`compiles with protoc${protoc === undefined ? ' (skipped: protoc is not installed; apt-get install protobuf-compiler)' : ''}`, () => {
    if (protoc === undefined) throw new Error('BATON_REQUIRE_PROTOC=1, but protoc is not installed (apt-get install protobuf-compiler).');
    const out = mkdtempSync(join(tmpdir(), 'baton-proto-'));
    try {
      execFileSync(protoc, [`--proto_path=${root}proto`, '--proto_path=/usr/include', `--descriptor_set_out=${join(out, 'baton.pb')}`, ...files.map((file) => file.replace(/^proto\//, ''))], { cwd: root, stdio: 'pipe' });
      expect(existsSync(join(out, 'baton.pb'))).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('keeps the checkpoint messages equal to the zod schemas, field by field', async () => {
    const pb = await messages();
    const pairs: [string, z.ZodType][] = [
      ['CheckpointInput', checkpointInput],
      ['ExecutionState', executionState],
      ['ContextSummary', contextSummary],
      ['Metrics', metrics],
      ['RecoveryInfo', recovery],
    ];
    for (const [message, schema] of pairs) expect(messageFields(pb, message), message).toEqual(fieldsOf(schema));
    // The stored compliance object adds what the service sets (hash, signature) to what a client sends.
    expect(messageFields(pb, 'Compliance')).toEqual([...fieldsOf(complianceInput), 'hash', 'signature'].sort());
  });

  it('keeps the protocol’s request messages equal to the zod request bodies', async () => {
    const pb = await messages();
    const pairs: [string, z.ZodType][] = [
      ['HandoffRequest', handoffBody],
      ['SuccessorRequest', successorBody],
      ['LeaseRequest', leaseBody],
      ['RecoveryRequest', recoveryBody],
      ['Failure', failureSchema],
    ];
    for (const [message, schema] of pairs) expect(messageFields(pb, message), message).toEqual(fieldsOf(schema));
  });

  it('gives the event message the CloudEvents attributes and the tracing extension', async () => {
    const pb = await messages();
    expect(messageFields(pb, 'Event')).toEqual(['data', 'datacontenttype', 'id', 'source', 'specversion', 'subject', 'time', 'traceparent', 'type']);
  });
});
