/**
 * A LangGraph API server for the release-note graph of examples/langgraph,
 * its threads and checkpoints in Baton:
 *
 *   BATON_URL=http://127.0.0.1:7070 BATON_TOKEN=… PORT=2024 tsx examples/langgraph-api/server.ts
 *
 * Drive it with the official client (`@langchain/langgraph-sdk`): create a
 * thread, run `release_notes` until it asks for approval, stop the server,
 * start it again (or another one), and resume the run with
 * `command: { resume: 'approve' }`. It prints one JSON line once it listens.
 */
import { BatonClient } from 'baton/client';
import { serveLangGraphApi } from 'baton/langgraph-api';
import { releaseNoteWorkflow } from '../langgraph/graph.js';

const client = new BatonClient({ baseUrl: process.env.BATON_URL ?? 'http://127.0.0.1:7070', ...(process.env.BATON_TOKEN ? { token: process.env.BATON_TOKEN } : {}) });
const api = await serveLangGraphApi({ client, graphs: { release_notes: releaseNoteWorkflow().compile() }, port: Number(process.env.PORT ?? 2024) });
console.log(JSON.stringify({ url: api.url }));
