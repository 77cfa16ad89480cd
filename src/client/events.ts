/**
 * `client.events`: pages of CloudEvents after a cursor, and the live feed as
 * an async iterator that resumes after a dropped connection (see `sse.ts`).
 *
 * @module
 */
import type { ClientCore } from './core.js';
import type { BackoffPolicy } from './retry.js';
import { eventStream, type StreamOptions } from './sse.js';
import type { CallOptions, Fetch } from './transport.js';
import type { EventPageQuery, Page, StoredEvent } from './types.js';

export class Events {
  constructor(
    private readonly core: ClientCore,
    private readonly fetch: Fetch,
    private readonly backoff: BackoffPolicy,
  ) {}

  /** `GET /v1/events`: the events after `after`, oldest first; pass `nextCursor` as `after` to read on. */
  page(query: EventPageQuery = {}, options?: CallOptions): Promise<Page<StoredEvent>> {
    const { types, after, limit } = query;
    const typeList = types && types.length > 0 ? types.join(',') : undefined;
    return this.core.transport.json<Page<StoredEvent>>({ method: 'GET', path: '/v1/events', query: { after, types: typeList, limit }, options });
  }

  /**
   * The live feed (`Accept: text/event-stream`): every event committed after
   * `after` (after the present when absent), as it happens, across
   * reconnections, until `signal` aborts or the loop is left.
   *
   * ```ts
   * for await (const event of client.events.stream({ types: ['LEASE_EXPIRED'], signal })) { … }
   * ```
   */
  stream(options: StreamOptions = {}): AsyncGenerator<StoredEvent, void, undefined> {
    const { transport } = this.core;
    return eventStream({ url: (query) => transport.url('/v1/events', query), authorization: () => transport.authorization(), fetch: this.fetch, backoff: this.backoff }, options);
  }
}
