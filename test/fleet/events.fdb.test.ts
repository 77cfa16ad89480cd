/**
 * Event streams across a fleet (DESIGN §7, §10): two real Baton processes
 * over one FoundationDB cluster. Writes go through A; a subscriber of B
 * that reconnects at random between A and B with `Last-Event-ID` receives
 * exactly the events `GET /v1/events` lists, in order, none missed and none
 * twice; a steady subscriber of B receives each event within 100 ms (p99)
 * of its create's 201; and a thousand idle streams on B add no store reads.
 * Without a cluster the suite is reported as skipped, with the reason.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBinding } from '../../src/store/fdb.js';
import { checkpointBody, TOKENS } from '../support/app.js';
import { fleetStore, startFleet, type Fleet } from '../support/fleet.js';

const store = fleetStore();
const reachable = store.ok ? await loadBinding().then(() => true, () => false) : false;
const reason = !store.ok ? store.reason : reachable ? '' : 'skipped: FDB_CLUSTER_FILE is set, but the FoundationDB client (libfdb_c and the npm package foundationdb) is not installed';
const auth = `Bearer ${TOKENS.writer}`;

const EVENTS = 10_000;
const WRITERS = 32;

interface Received {
  id: string;
  checkpointId: string | undefined;
  at: number;
}

/**
 * One SSE connection: calls `onEvent` per event with its id; resolves once
 * the server has sent its first frame. `close()` ends it.
 */
function stream(url: string, lastEventId: string | undefined, onEvent: (event: Received) => void): Promise<{ close: () => void; ended: Promise<void>; start: string | undefined }> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${url}/v1/events`, { headers: { accept: 'text/event-stream', authorization: auth, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) }, agent: false });
    request.on('error', reject);
    request.on('response', (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`The stream answered ${response.statusCode}.`));
        return;
      }
      let buffer = '';
      let opened = false;
      let start: string | undefined;
      const ended = new Promise<void>((done) => {
        response.on('close', done);
        response.on('error', () => done());
      });
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const id = /^id: (.+)$/m.exec(frame)?.[1];
          const data = /^data: (.+)$/m.exec(frame)?.[1];
          if (!opened && data === undefined) start = id;
          if (id !== undefined && data !== undefined) {
            const event = JSON.parse(data) as { data?: { checkpointId?: string } };
            onEvent({ id, checkpointId: event.data?.checkpointId, at: performance.now() });
          }
        }
        if (!opened) {
          opened = true;
          resolve({ close: () => request.destroy(), ended, start });
        }
      });
    });
  });
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKENS.admin}` } })).text();
  const lines = text.split('\n').filter((line) => line.startsWith(name));
  if (lines.length === 0) throw new Error(`${url}/metrics has no ${name}.`);
  return lines.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe.skipIf(!reachable)(reachable ? 'event streams across two instances over one FoundationDB cluster' : `event streams across two instances over one FoundationDB cluster — ${reason}`, () => {
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet({ size: 2 });
  }, 180_000);
  afterAll(async () => {
    await fleet?.stop();
  });

  it(`delivers ${EVENTS} events written through A to a subscriber of B that reconnects at random between A and B, none missed or repeated, p99 within 100 ms`, async () => {
    const [a, b] = [fleet.at(0), fleet.at(1)];
    const steady: Received[] = [];
    // One event first, so that the stream below has one to start after: on an empty outbox it starts with no id,
    // and a roamer that hung up before its first event would come back "from now" and skip what came meanwhile.
    const seed = await fetch(`${a.url}/v1/checkpoints`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: auth }, body: JSON.stringify(checkpointBody('events-seed')) });
    expect(seed.status).toBe(201);
    // Without an id the stream starts at the newest event now, and says which: the run's events are those after it.
    const steadyStream = await stream(b.url, undefined, (event) => steady.push(event));
    const start = steadyStream.start;
    expect(start).toBeDefined();
    const roaming: Received[] = [];
    let roamingStream = await stream(b.url, start, (event) => roaming.push(event));
    let reconnects = 0;
    let writing = true;
    // The roamer hangs up every 50–300 ms and comes back to A or B at random with the last id it saw.
    const roam = (async () => {
      while (writing) {
        await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 250));
        roamingStream.close();
        await roamingStream.ended;
        const next = Math.random() < 0.5 ? a : b;
        roamingStream = await stream(next.url, roaming.at(-1)?.id ?? start, (event) => roaming.push(event));
        reconnects += 1;
      }
    })();

    const answered = new Map<string, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, writer) => {
        while (next < EVENTS) {
          next += 1;
          const res = await fetch(`${a.url}/v1/checkpoints`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: auth }, body: JSON.stringify(checkpointBody(`events-${writer}`)) });
          expect(res.status).toBe(201);
          answered.set(((await res.json()) as { id: string }).id, performance.now());
        }
      }),
    );
    writing = false;
    await roam;

    // Every event the store lists after the start, in order.
    const listed: string[] = [];
    for (let after = start, more = true; more; ) {
      const page = (await (await fetch(`${a.url}/v1/events?limit=1000${after ? `&after=${after}` : ''}`, { headers: { authorization: auth } })).json()) as { items: { cursor: string }[]; nextCursor?: string };
      listed.push(...page.items.map((item) => item.cursor));
      after = page.items.at(-1)?.cursor ?? after;
      more = page.nextCursor !== undefined;
    }
    expect(listed.length).toBeGreaterThanOrEqual(EVENTS);
    const until = Date.now() + 15_000;
    while ((roaming.length < listed.length || steady.length < listed.length) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    steadyStream.close();
    roamingStream.close();

    expect(reconnects).toBeGreaterThan(10);
    expect(roaming.map((event) => event.id)).toEqual(listed);
    expect(steady.map((event) => event.id)).toEqual(listed);
    // From a create's 201 to its CHECKPOINT_CREATED on B's steady stream.
    const delays = steady.filter((event) => event.checkpointId !== undefined && answered.has(event.checkpointId)).map((event) => Math.max(0, event.at - answered.get(event.checkpointId!)!));
    expect(delays.length).toBe(EVENTS);
    delays.sort((x, y) => x - y);
    const p99 = delays[Math.floor(delays.length * 0.99)]!;
    console.log(`events: ${listed.length} delivered through B; roaming subscriber reconnected ${reconnects} times; 201 → delivery on B p50 ${delays[Math.floor(delays.length / 2)]!.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`);
    expect(p99).toBeLessThanOrEqual(100);
  }, 300_000);

  it('adds no store reads per second for 1,000 idle streams', async () => {
    const b = fleet.at(1);
    const reads = (): Promise<number> => metric(b.url, 'store_transactions_total{mode="read"}');
    const WINDOW_MS = 5_000;
    const rate = async (): Promise<number> => {
      const first = await reads();
      await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
      return ((await reads()) - first) / (WINDOW_MS / 1000);
    };
    const idle = await rate();
    const beforeOpening = await reads();
    const streams = [];
    for (let i = 0; i < 1000; i += 1) streams.push(await stream(b.url, undefined, () => undefined));
    // Each stream reads where it starts: the counter does count B's reads.
    expect((await reads()) - beforeOpening).toBeGreaterThanOrEqual(1000);
    // Opening a stream reads once (where it starts, and the first page); only what follows counts.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const open = await rate();
    for (const s of streams) s.close();
    console.log(`store reads on B: ${idle.toFixed(1)}/s with no streams, ${open.toFixed(1)}/s with 1,000 idle streams`);
    expect(open - idle).toBeLessThan(1);
  }, 120_000);
});
