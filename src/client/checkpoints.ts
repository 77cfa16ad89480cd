/**
 * `client.checkpoints`: create, read, change, finalize, link, lineage,
 * revisions, search, a task's history and latest checkpoint, and what a
 * resuming agent asks of one (its resume prompt, a stale-check of files).
 *
 * @module
 */
import type { ClientCore } from './core.js';
import { parseAnswer, segment, type CallOptions } from './transport.js';
import type {
  Checkpoint,
  CheckpointInput,
  CheckpointPage,
  FinalizeRequest,
  LineagePage,
  LinkResult,
  Page,
  PageQuery,
  ReportedFile,
  ResumePrompt,
  RevisionInfo,
  SearchQuery,
  StaleReport,
  VerifiedCheckpoint,
} from './types.js';

export interface PatchOptions extends CallOptions {
  /** The version the patch was written against (the ETag); a stale one is refused with 412 `version_conflict`. */
  ifMatch: number;
}

export interface FinalizeOptions extends CallOptions {
  /** When given, finalizing a checkpoint that changed since this version is refused with 412. */
  ifMatch?: number;
}

const MERGE_PATCH = 'application/merge-patch+json';

export class Checkpoints {
  constructor(private readonly core: ClientCore) {}

  /** `POST /v1/checkpoints`; with `parentId` the link is made in the same transaction. */
  async create(input: CheckpointInput, options?: CallOptions): Promise<Checkpoint> {
    const headers = this.core.fenceTask(input.taskId);
    return this.seen(await this.core.transport.json<Checkpoint>({ method: 'POST', path: '/v1/checkpoints', body: input, headers, options }));
  }

  /** `GET /v1/checkpoints/:id`: the current version, its hash verified by the service. */
  get(id: string, options?: CallOptions): Promise<Checkpoint> {
    return this.core.checkpoint(id, undefined, options);
  }

  /** `GET /v1/checkpoints/:id?version=N`: an earlier version. */
  getVersion(id: string, version: number, options?: CallOptions): Promise<Checkpoint> {
    return this.core.checkpoint(id, version, options);
  }

  /** `PATCH /v1/checkpoints/:id`: a JSON Merge Patch (RFC 7396) against version `ifMatch`. */
  async patch(id: string, patch: Record<string, unknown>, options: PatchOptions): Promise<Checkpoint> {
    const headers = { ...(await this.core.fenceCheckpoint(id, options)), 'if-match': `"${options.ifMatch}"` };
    return this.seen(await this.core.transport.json<Checkpoint>({ method: 'PATCH', path: `/v1/checkpoints/${segment(id)}`, body: patch, contentType: MERGE_PATCH, headers, options }));
  }

  /** `POST /v1/checkpoints/:id/finalize`: immutable afterwards. */
  async finalize(id: string, request: FinalizeRequest, options?: FinalizeOptions): Promise<Checkpoint> {
    const headers = { ...(await this.core.fenceCheckpoint(id, options)), ...(options?.ifMatch !== undefined ? { 'if-match': `"${options.ifMatch}"` } : {}) };
    return this.seen(await this.core.transport.json<Checkpoint>({ method: 'POST', path: `/v1/checkpoints/${segment(id)}/finalize`, body: request, headers, options }));
  }

  /** `POST /v1/checkpoints/:parentId/links`: `childId` gets `parentId` as its one parent (a write to the child's task). */
  async link(parentId: string, childId: string, options?: CallOptions): Promise<LinkResult> {
    const headers = await this.core.fenceCheckpoint(childId, options);
    const result = await this.core.transport.json<LinkResult>({ method: 'POST', path: `/v1/checkpoints/${segment(parentId)}/links`, body: { childId }, headers, options });
    this.core.book.saw(result.child);
    return result;
  }

  /** `GET /v1/checkpoints/:id/lineage`: ancestors (nearest first), then children, a page at a time. */
  lineage(id: string, page: PageQuery = {}, options?: CallOptions): Promise<LineagePage> {
    return this.core.transport.json<LineagePage>({ method: 'GET', path: `/v1/checkpoints/${segment(id)}/lineage`, query: { ...page }, options });
  }

  /** `GET /v1/checkpoints/:id/revisions`: every version, oldest first, with its hash, a page at a time. */
  revisions(id: string, page: PageQuery = {}, options?: CallOptions): Promise<Page<RevisionInfo>> {
    return this.core.transport.json<Page<RevisionInfo>>({ method: 'GET', path: `/v1/checkpoints/${segment(id)}/revisions`, query: { ...page }, options });
  }

  /** `GET /v1/checkpoints`: filters combine with AND; page on with `nextCursor`. */
  async search(query: SearchQuery = {}, options?: CallOptions): Promise<CheckpointPage> {
    const { labels, ...plain } = query;
    const params: Record<string, string | number | undefined> = { ...plain };
    for (const [name, value] of Object.entries(labels ?? {})) params[`label.${name}`] = String(value);
    return this.seenAll(await this.core.transport.json<CheckpointPage>({ method: 'GET', path: '/v1/checkpoints', query: params, options }));
  }

  /** `GET /v1/tasks/:taskId/checkpoints`: a task's checkpoints, newest first. */
  async history(taskId: string, query: PageQuery = {}, options?: CallOptions): Promise<CheckpointPage> {
    return this.seenAll(await this.core.transport.json<CheckpointPage>({ method: 'GET', path: `/v1/tasks/${segment(taskId)}/checkpoints`, query: { ...query }, options }));
  }

  /** `GET /v1/tasks/:taskId/checkpoints/latest`: the newest checkpoint that verifies, and the corrupt ones passed over. */
  async latest(taskId: string, options?: CallOptions): Promise<VerifiedCheckpoint> {
    const answer = await this.core.transport.send({ method: 'GET', path: `/v1/tasks/${segment(taskId)}/checkpoints/latest`, options });
    const checkpoint = this.seen(parseAnswer<Checkpoint>(answer));
    const skipped = answer.headers.get('baton-skipped-corrupt');
    return { checkpoint, skipped: skipped ? skipped.split(',') : [] };
  }

  /** `GET /v1/checkpoints/:id/resume-prompt`: the continuation prompt, fitted to `maxTokens` by priority. */
  resumePrompt(id: string, query: { maxTokens?: number; version?: number } = {}, options?: CallOptions): Promise<ResumePrompt> {
    return this.core.transport.json<ResumePrompt>({ method: 'GET', path: `/v1/checkpoints/${segment(id)}/resume-prompt`, query: { ...query }, options });
  }

  /** `POST /v1/checkpoints/:id/stale-check`: which of these files changed after the checkpoint (a read, sent as POST). */
  staleCheck(id: string, files: ReportedFile[], options?: CallOptions): Promise<StaleReport> {
    return this.core.transport.json<StaleReport>({ method: 'POST', path: `/v1/checkpoints/${segment(id)}/stale-check`, body: { files }, options });
  }

  private seen(checkpoint: Checkpoint): Checkpoint {
    this.core.book.saw(checkpoint);
    return checkpoint;
  }

  private seenAll(page: CheckpointPage): CheckpointPage {
    for (const checkpoint of page.items) this.core.book.saw(checkpoint);
    return page;
  }
}
