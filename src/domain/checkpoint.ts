/**
 * The checkpoint resource: its zod schemas (DESIGN §2) and types. Domain code
 * imports nothing else of Baton's.
 *
 * @module
 */
import { z } from 'zod';

export const PHASES = ['planning', 'implementing', 'testing', 'reviewing', 'complete', 'handoff'] as const;
export const FINAL_STATUSES = ['completed', 'failed', 'handoff', 'abandoned'] as const;
export const STATUSES = ['active', 'finalized'] as const;
export const SCHEMA_VERSION = '1.0';
export type FinalStatus = (typeof FINAL_STATUSES)[number];

const text = (max: number) => z.string().max(max);
/** The most UTF-16 code units in an id chosen by a caller. */
export const EXTERNAL_ID_MAX = 200;
/**
 * Ids chosen by callers (tasks, agents): printable, no control characters.
 * A pattern rather than a refinement, so that the OpenAPI document states
 * the rule and a client generated from it sends only ids that pass.
 */
export const externalId = z
  .string()
  .min(1)
  .max(EXTERNAL_ID_MAX)
  // The control characters are the rule itself: the pattern names them to refuse them.
  // eslint-disable-next-line no-control-regex
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters');
export const checkpointId = z.uuid({ message: 'must be a UUID' });
const timestamp = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' });

export const fileRef = z.union([text(4096).min(1), z.looseObject({ path: text(4096).min(1), sha256: z.string().regex(/^[a-f0-9]{64}$/i, 'must be 64 hex characters').optional() })]);

export const item = z.union([
  text(20_000),
  z.looseObject({
    id: text(200).optional(),
    description: text(20_000),
    files: z
      .looseObject({ created: z.array(fileRef).optional(), modified: z.array(fileRef).optional(), deleted: z.array(fileRef).optional() })
      .optional(),
    at: timestamp.optional(),
    blocker: text(20_000).optional(),
  }),
]);

export const decision = z.union([
  text(20_000),
  z.looseObject({ decision: text(20_000), rationale: text(20_000).optional(), at: timestamp.optional(), by: text(200).optional() }),
]);

const list = <T extends z.ZodType>(schema: T) => z.array(schema).max(10_000);

export const executionState = z.looseObject({
  phase: z.enum(PHASES).optional(),
  completedItems: list(item).optional(),
  pendingItems: list(item).optional(),
  blockedItems: list(item).optional(),
  currentFocus: text(20_000).nullable().optional(),
});

export const contextSummary = z.looseObject({
  keyDecisions: list(decision).optional(),
  assumptions: list(item).optional(),
  constraints: list(item).optional(),
  externalDependencies: list(item).optional(),
});

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const metrics = z.looseObject({
  tokensConsumed: count.optional(),
  toolsInvoked: count.optional(),
  filesModified: list(fileRef).optional(),
  /** A fraction (0–1) or a percentage (up to 100), stored as sent. */
  contextUtilization: z.number().min(0).max(100).optional(),
  testsStatus: z
    .looseObject({ passed: count.optional(), failed: count.optional(), skipped: count.optional(), coveragePercent: z.number().min(0).max(100).optional() })
    .optional(),
});

export const recovery = z.looseObject({
  lastSuccessfulState: z.string().max(200).nullable().optional(),
  rollbackInstructions: text(100_000).nullable().optional(),
  continuationPrompt: text(500_000).nullable().optional(),
});

/**
 * ISO 8601 duration, e.g. P7Y or P30D. Each part has a bounded number of
 * digits (at most 9999 years, 99999 months, …), so that a duration added to
 * any date Baton stores stays a date JavaScript can hold (±275,000 years):
 * together the parts reach about 78,000 years.
 */
export const isoDuration = z
  .string()
  .regex(/^P(?!$)(\d{1,4}Y)?(\d{1,5}M)?(\d{1,6}W)?(\d{1,7}D)?(T(?=\d)(\d{1,8}H)?(\d{1,9}M)?(\d{1,10}(\.\d{1,9})?S)?)?$/, 'must be an ISO 8601 duration such as P30D, each part at most 4 to 10 digits');

export const complianceInput = z.strictObject({
  eventLogRef: z.string().max(1000).optional(),
  retentionPolicy: isoDuration.optional(),
  legalHold: z.boolean().optional(),
});

export const labelKey = z.string().min(1).max(100).regex(/^[A-Za-z0-9_.\-/]+$/, 'label names use letters, digits and _ . - /');
export const labels = z.record(labelKey, z.union([z.string().max(1000), z.number(), z.boolean()]));

/** A fingerprint of an agent's code or graph (a commit, a digest): printable, no spaces. */
export const codeVersion = z.string().min(1).max(200).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

/** What a client sends to create a checkpoint. */
export const checkpointInput = z.strictObject({
  /** Agents that write the protocol's own format send it; only this version exists. */
  schemaVersion: z.literal(SCHEMA_VERSION, { message: `must be "${SCHEMA_VERSION}"` }).optional(),
  taskId: externalId,
  agentId: externalId,
  agentType: externalId.optional(),
  iteration: z.number().int().min(0).max(1_000_000_000).optional(),
  /** A fingerprint of the agent's code or graph; a resume under another one must say it accepts the change. */
  codeVersion: codeVersion.optional(),
  parentId: checkpointId.optional(),
  executionState: executionState.optional(),
  contextSummary: contextSummary.optional(),
  metrics: metrics.optional(),
  recovery: recovery.optional(),
  compliance: complianceInput.optional(),
  labels: labels.optional(),
  extensions: z.record(z.string(), z.unknown()).optional(),
});
export type CheckpointInput = z.infer<typeof checkpointInput>;

export const signatureRecord = z.object({
  algorithm: z.literal('Ed25519'),
  keyId: z.string(),
  signer: z.string(),
  meaning: z.string(),
  signedAt: z.string(),
  value: z.string(),
});
export type SignatureRecord = z.infer<typeof signatureRecord>;

/** The stored and returned checkpoint. */
export interface Checkpoint {
  id: string;
  taskId: string;
  agentId: string;
  agentType?: string;
  iteration: number;
  codeVersion?: string;
  schemaVersion: string;
  status: (typeof STATUSES)[number];
  finalStatus?: FinalStatus;
  version: number;
  createdAt: string;
  updatedAt: string;
  finalizedAt?: string;
  parentId?: string;
  executionState: z.infer<typeof executionState>;
  contextSummary: z.infer<typeof contextSummary>;
  metrics: z.infer<typeof metrics>;
  recovery: z.infer<typeof recovery>;
  compliance: {
    eventLogRef?: string;
    hash?: string;
    signature?: SignatureRecord;
    retentionPolicy?: string;
    legalHold?: boolean;
  };
  labels: Record<string, string | number | boolean>;
  extensions: Record<string, unknown>;
}

/** Fields only the service sets; a merge patch that changes them is refused. */
export const READ_ONLY_FIELDS = [
  'id',
  'taskId',
  'schemaVersion',
  'status',
  'finalStatus',
  'version',
  'createdAt',
  'updatedAt',
  'finalizedAt',
  'parentId',
  'compliance.hash',
  'compliance.signature',
] as const;
