/**
 * When a request has the process to itself (`http/plugins/in-flight.ts`),
 * which decides whether a commit may run on the event loop
 * (`Store.commitInline`): over a real socket, a lone client on one
 * keep-alive connection is alone once no other connection has been heard
 * from for a while; a request on another connection, a second request in
 * flight, or one cut off before its answer is counted as a user of the
 * server would expect, and none is left counted afterwards.
 */
import http from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requestAlone, requestsInFlightPlugin } from '../../../src/http/plugins/in-flight.js';

let app: FastifyInstance;
let base: string;
let release: (() => void) | undefined;
const held = new Set<() => void>();

beforeAll(async () => {
  app = Fastify();
  await app.register(requestsInFlightPlugin);
  app.get('/alone', async () => ({ alone: requestAlone() }));
  // Answers once released: a request kept in flight.
  app.get('/held', async () => {
    await new Promise<void>((resolve) => {
      held.add(resolve);
      release = () => {
        for (const go of held) go();
        held.clear();
      };
    });
    return { alone: requestAlone() };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  release?.();
  await app.close();
});

function get(agent: http.Agent, path: string): Promise<{ alone: boolean }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${base}${path}`, { agent }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve(JSON.parse(body) as { alone: boolean }));
      })
      .on('error', reject);
  });
}

const quiet = () => sleep(150);

it('is alone on the one connection every recent request came on, and not just after a request on another', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const other = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    expect(await get(agent, '/alone')).toEqual({ alone: false });
    await quiet();
    expect(await get(agent, '/alone')).toEqual({ alone: true });
    expect(await get(agent, '/alone')).toEqual({ alone: true });
    // A probe on a connection of its own: for a while, neither it nor the client is alone.
    expect(await get(other, '/alone')).toEqual({ alone: false });
    expect(await get(agent, '/alone')).toEqual({ alone: false });
    await quiet();
    // The other connection is still open, idle: the client is alone again.
    expect(await get(agent, '/alone')).toEqual({ alone: true });
  } finally {
    agent.destroy();
    other.destroy();
  }
});

it('is not alone while a second request is in flight on the same connection (pipelined)', async () => {
  const { port } = app.server.address() as AddressInfo;
  const socket = connect(port, '127.0.0.1');
  let answers = '';
  socket.on('data', (chunk: Buffer) => (answers += chunk.toString()));
  try {
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write('GET /alone HTTP/1.1\r\nHost: x\r\n\r\n');
    await quiet();
    socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\nGET /held HTTP/1.1\r\nHost: x\r\n\r\n');
    await sleep(100);
    release!();
    await sleep(100);
    release!();
    await sleep(100);
    const bodies = answers.match(/\{"alone":(true|false)\}/g);
    expect(bodies).toEqual(['{"alone":false}', '{"alone":false}', expect.stringMatching(/alone/)]);
  } finally {
    socket.destroy();
  }
});

it('is not alone while another request is in flight, and is again once it is answered or cut off', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  try {
    const first = get(agent, '/held');
    await sleep(50);
    await quiet();
    // Two in flight on two connections of one client; then only the first, released.
    const second = get(agent, '/held');
    await sleep(50);
    release!();
    expect(await Promise.all([first, second])).toEqual([{ alone: false }, { alone: false }]);

    // A request whose client goes away before the answer is not counted once its connection closes.
    const cut = http.get(`${base}/held`, { agent: new http.Agent({ keepAlive: false }) });
    cut.on('error', () => undefined);
    await sleep(50);
    cut.destroy();
    await sleep(50);
    release!();
    await quiet();
    const lone = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      await get(lone, '/alone');
      await quiet();
      expect(await get(lone, '/alone')).toEqual({ alone: true });
    } finally {
      lone.destroy();
    }
  } finally {
    agent.destroy();
  }
});
