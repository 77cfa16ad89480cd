/**
 * An A2A server whose tasks live in Baton: start as many as you like over
 * one Baton, stop and start them, and every one serves every task.
 *
 *   BATON_URL=http://127.0.0.1:7070 BATON_TOKEN=… PORT=41241 REPLICA=a tsx examples/a2a/server.ts
 *
 * It prints one JSON line with its URL once it listens.
 */
import { AGENT_CARD_PATH } from '@a2a-js/sdk';
import { DefaultRequestHandler } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import express from 'express';
import { BatonClient } from 'baton/client';
import { BatonTaskStore } from 'baton/a2a';
import { TicketDesk, agentCard } from './agent.js';

const client = new BatonClient({ baseUrl: process.env.BATON_URL ?? 'http://127.0.0.1:7070', ...(process.env.BATON_TOKEN ? { token: process.env.BATON_TOKEN } : {}) });
const replica = process.env.REPLICA ?? 'a';
const app = express();
const server = app.listen(Number(process.env.PORT ?? 41241), '127.0.0.1', () => {
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const handler = new DefaultRequestHandler(agentCard(url), new BatonTaskStore({ client }), new TicketDesk(replica));
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  console.log(JSON.stringify({ replica, url }));
});
