/**
 * Every error Baton answers with, in one table: a stable `code`, its HTTP
 * status, a short title and a static sentence a person can act on. Variables
 * go in `detail` fields and logs, never in the sentence. `docs/errors.md`
 * lists the same table; a test keeps the two equal.
 *
 * @module
 */

export const ERRORS = {
  validation_failed: { status: 400, title: 'Validation failed', message: 'The request is invalid; correct the fields listed in errors and send it again.' },
  invalid_cursor: { status: 400, title: 'Invalid cursor', message: 'The cursor is not one this service issued; start again without it.' },
  unauthorized: { status: 401, title: 'Unauthorized', message: 'Send a valid token as "Authorization: Bearer <token>".' },
  forbidden: { status: 403, title: 'Forbidden', message: 'Your token’s role does not allow this request.' },
  not_found: { status: 404, title: 'Not found', message: 'Nothing exists at this address for your tenant; check the id.' },
  route_not_found: { status: 404, title: 'Route not found', message: 'No route matches this method and path; see /docs for the API.' },
  not_acceptable: { status: 406, title: 'Not acceptable', message: 'This resource cannot be returned in the media type named in Accept.' },
  checkpoint_finalized: { status: 409, title: 'Checkpoint finalized', message: 'The checkpoint is finalized and can no longer change; create a new checkpoint instead.' },
  checkpoint_corrupted: { status: 409, title: 'Checkpoint corrupted', message: 'The stored checkpoint no longer matches its hash; it is withheld. Read an earlier version or the task’s recovery point.' },
  already_linked: { status: 409, title: 'Already linked', message: 'The child checkpoint already has a parent; a checkpoint has at most one.' },
  link_cycle: { status: 409, title: 'Link cycle', message: 'The link would make a checkpoint its own ancestor; link to a checkpoint outside its lineage.' },
  lease_held: { status: 409, title: 'Lease held', message: 'Another agent holds a live lease on this task; wait for it to expire or be released.' },
  lease_superseded: { status: 409, title: 'Lease superseded', message: 'Your lease epoch is older than the task’s current lease; stop writing to this task.' },
  lease_expired: { status: 409, title: 'Lease expired', message: 'The lease expired before it was renewed; acquire a new lease before writing again.' },
  lease_released: { status: 409, title: 'Lease released', message: 'The lease was released; acquire a new lease before writing again.' },
  handoff_pending: { status: 409, title: 'Handoff pending', message: 'The task already has a handoff waiting for acknowledgment; let it be acknowledged before handing off again.' },
  handoff_taken: { status: 409, title: 'Handoff taken', message: 'Another agent already acknowledged this handoff; this agent must not take the task.' },
  handoff_not_for_agent: { status: 409, title: 'Handoff for another agent', message: 'The handoff names another agent or agent type; only that agent may acknowledge it.' },
  recovery_taken: { status: 409, title: 'Recovery taken', message: 'Another agent already completed this recovery; this agent must not take the task.' },
  recovery_blocked: { status: 409, title: 'Recovery blocked', message: 'This recovery was blocked instead of started; an admin must unblock the task, then start a new recovery.' },
  code_version_mismatch: { status: 409, title: 'Code version mismatch', message: 'The task was checkpointed under another code version; resume with acceptCodeChange: true only if the change is safe.' },
  queued_write_outlived: {
    status: 410,
    title: 'Queued write outlived its operation record',
    message: 'The write waited in the queue longer than operation records are kept, so a repeat could no longer be recognised; it was not applied. Check the checkpoint and resubmit it if it is missing.',
  },
  encryption_key_missing: {
    status: 503,
    title: 'Encryption key missing',
    message: 'A value this request needs is sealed with an encryption key this instance does not have; add that key’s line to BATON_ENCRYPTION_KEY_FILE on every instance.',
  },
  encryption_not_configured: { status: 409, title: 'Encryption not configured', message: 'This service has no encryption key, so there is nothing to re-seal; set BATON_ENCRYPTION_KEY_FILE and restart it.' },
  signing_not_configured: { status: 409, title: 'Signing not configured', message: 'This service has no signing key, so it cannot sign evidence; set BATON_SIGNING_KEY_FILE and restart it.' },
  retention_active: { status: 409, title: 'Retention active', message: 'A retention period or legal hold still applies to this task; it cannot be purged yet.' },
  method_not_allowed: { status: 405, title: 'Method not allowed', message: 'This resource does not answer this method; see the Allow header.' },
  legal_hold: { status: 409, title: 'Legal hold', message: 'A legal hold applies to this task: nothing of it may be purged, compacted or expired until an admin lifts the hold.' },
  task_purging: { status: 409, title: 'Task being purged', message: 'The task is being purged; it takes no other write until the purge ends.' },
  lineage_too_deep: { status: 409, title: 'Lineage too deep', message: 'The parent’s lineage is deeper than one transaction can check for a cycle; link to a checkpoint nearer its root.' },
  conflict: { status: 409, title: 'Conflict', message: 'The request conflicts with the current state of the resource; read it again and retry.' },
  checkpoint_compacted: { status: 410, title: 'Checkpoint compacted', message: 'This checkpoint was removed by compaction under its task’s policy; read a newer checkpoint of the task.' },
  events_expired: { status: 410, title: 'Events expired', message: 'Events after this cursor are past their retention and no longer held; start again from oldestId or from now.' },
  version_conflict: { status: 412, title: 'Version conflict', message: 'The checkpoint changed since the version named in If-Match; read it again and resend your change against the new ETag.' },
  request_timeout: { status: 408, title: 'Request timeout', message: 'The request did not arrive in full in time; send it again, whole.' },
  payload_too_large: { status: 413, title: 'Payload too large', message: 'The request body is larger than the service accepts; send a smaller checkpoint.' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type', message: 'Send the body as application/json (or application/merge-patch+json for PATCH).' },
  idempotency_key_reused: { status: 422, title: 'Idempotency key reused', message: 'This Idempotency-Key was already used with a different request; use a new key for a new request.' },
  precondition_required: { status: 428, title: 'Precondition required', message: 'Send If-Match with the checkpoint’s current ETag, e.g. If-Match: "3".' },
  lease_required: { status: 428, title: 'Lease required', message: 'This task has a live lease; send its epoch as Baton-Lease-Epoch with every write.' },
  headers_too_large: {
    status: 431,
    title: 'Request header fields too large',
    message: 'The URL and headers together are larger than the service reads (16 KB); send a shorter URL (a cursor or filter that is too long) or fewer headers.',
  },
  rate_limited: { status: 429, title: 'Too many requests', message: 'Your token sent too many requests; wait for the time in Retry-After and try again.' },
  internal_error: { status: 500, title: 'Internal error', message: 'The service failed to handle the request; it has been logged. Retry later.' },
  store_unavailable: { status: 503, title: 'Store unavailable', message: 'The store cannot serve the request right now; retry after a short wait.' },
  task_contended: { status: 503, title: 'Task contended', message: 'Too many writers changed this task at once and this write kept losing; retry after the time in Retry-After.' },
  store_format_unsupported: { status: 503, title: 'Store format unsupported', message: 'The store was written by a newer version of Baton than this one; run that version or a newer one.' },
  queue_full: { status: 503, title: 'Queue full', message: 'The store is unavailable and the local write queue is full; retry after a short wait.' },
  queue_disk_full: {
    status: 503,
    title: 'Queue disk full',
    message: 'The store is unavailable and the disk of the local write queue has no room, so the write was not accepted; retry after the time in Retry-After (another instance may take it), and free space in the queue directory named in detail.',
  },
  insufficient_storage: {
    status: 507,
    title: 'Insufficient storage',
    message: 'The disk has no room for this write and nothing of it was written; free space in the directory named in detail (reads still work), then send the write again.',
  },
} as const satisfies Record<string, { status: number; title: string; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** One offending field of a request: where it is, and what is wrong with it. */
export interface FieldError {
  /** JSON Pointer-like path, e.g. `executionState.phase` or `headers.if-match`. */
  field: string;
  message: string;
}

/**
 * The error raised by services and routes; the error handler turns it into an
 * RFC 9457 problem. `detail` may add facts about this occurrence.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: string | undefined;
  readonly errors: FieldError[] | undefined;
  readonly extra: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, options?: { detail?: string; errors?: FieldError[]; extra?: Record<string, unknown>; cause?: unknown }) {
    super(ERRORS[code].message, { cause: options?.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.detail = options?.detail;
    this.errors = options?.errors;
    this.extra = options?.extra;
  }
}
