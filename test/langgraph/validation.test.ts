/**
 * LangGraph's own certification suite for checkpointers
 * (`@langchain/langgraph-checkpoint-validation`), every one of its tests,
 * run against BatonSaver talking to the real app over a real socket, on
 * LMDB in a temporary directory. Each checkpointer the suite asks for gets
 * its own agent id and task prefix, so no instance sees another's threads
 * (the suite's isolation rule) while all share one server.
 */
import { randomUUID } from 'node:crypto';
import { validate } from '@langchain/langgraph-checkpoint-validation';
import { BatonSaver } from '../../src/langgraph/index.js';
import { listen, type Listening } from '../client/support/server.js';

let server: Listening | undefined;

validate<BatonSaver>({
  checkpointerName: 'BatonSaver',
  beforeAllTimeout: 60_000,
  async beforeAll() {
    server = await listen({ writerPurge: '1' });
  },
  async afterAll() {
    await server?.close();
  },
  createCheckpointer() {
    const instance = randomUUID();
    return new BatonSaver({ client: server!.client(), agentId: `validation-${instance}`, taskPrefix: `validation-${instance}:` });
  },
});
