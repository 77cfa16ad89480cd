/**
 * A LangGraph API server for one's own graphs with Baton behind it: the
 * embed server of `@langchain/langgraph-api` (threads, runs, state, history
 * and streaming, the routes the official `@langchain/langgraph-sdk` client
 * speaks) with `BatonSaver` as its checkpointer and `BatonThreadSaver` as
 * its threads, so the server itself keeps nothing: restart it, or run
 * several, and every thread and checkpoint is still there.
 *
 * @module
 */
import { serve } from '@hono/node-server';
import { createEmbedServer } from '@langchain/langgraph-api/experimental/embed';
import type { BatonClient } from '../client/index.js';
import { BatonSaver } from '../langgraph/index.js';
import { BatonThreadSaver } from './thread-saver.js';

type EmbedOptions = Parameters<typeof createEmbedServer>[0];

export interface LangGraphApiOptions {
  client: BatonClient;
  /**
   * The compiled graphs (`StateGraph#compile()`) the server runs, by
   * assistant id (the `assistant_id` of a run). Typed loosely: the embed
   * server's `Pregel` type is that of the LangGraph release it was built
   * against, and a graph compiled by a newer one differs from it only in
   * type parameters.
   */
  graphs: Record<string, object>;
  /** The Baton agent id checkpoints and thread records are written as (default `langgraph`). */
  agentId?: string;
  /** A thread's Baton task is `taskPrefix + thread_id` (default `langgraph:`). */
  taskPrefix?: string;
  /** A LangGraph store for the graphs' long-term memory, if they use one. */
  store?: EmbedOptions['store'];
}

export interface LangGraphApi {
  /** The Hono app: serve it (`serveLangGraphApi`), mount it in another Hono app, or call `app.request` in tests. */
  app: ReturnType<typeof createEmbedServer>;
  checkpointer: BatonSaver;
  threads: BatonThreadSaver;
}

export function createLangGraphApi(options: LangGraphApiOptions): LangGraphApi {
  const shared = { client: options.client, ...(options.agentId !== undefined ? { agentId: options.agentId } : {}), ...(options.taskPrefix !== undefined ? { taskPrefix: options.taskPrefix } : {}) };
  const checkpointer = new BatonSaver(shared);
  const threads = new BatonThreadSaver(shared);
  const graph = options.graphs as EmbedOptions['graph'];
  const app = createEmbedServer({ graph, checkpointer, threads, ...(options.store !== undefined ? { store: options.store } : {}) });
  return { app, checkpointer, threads };
}

export interface ServeOptions extends LangGraphApiOptions {
  /** 0 picks a free port (default 2024, the LangGraph CLI's). */
  port?: number;
  /** Default 127.0.0.1. */
  hostname?: string;
}

export interface ServedLangGraphApi extends LangGraphApi {
  url: string;
  close(): Promise<void>;
}

/** Creates the server and listens on Node's HTTP server; resolves once it listens. */
export function serveLangGraphApi(options: ServeOptions): Promise<ServedLangGraphApi> {
  const api = createLangGraphApi(options);
  const hostname = options.hostname ?? '127.0.0.1';
  return new Promise((resolve) => {
    const server = serve({ fetch: api.app.fetch, port: options.port ?? 2024, hostname }, (info) => {
      resolve({
        ...api,
        url: `http://${hostname}:${info.port}`,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            // Streams and idle keep-alive connections would otherwise hold the close open.
            if ('closeAllConnections' in server) server.closeAllConnections();
          }),
      });
    });
  });
}
