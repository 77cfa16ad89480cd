/**
 * A body over the limit over a real socket: the server answers 413
 * problem+json and reads the rest of the upload before closing, so a client
 * still uploading (Node's fetch here) reads the answer instead of failing
 * with EPIPE; and what it reads past the limit is bounded.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drainLimits } from '../../../src/http/plugins/body-drain.js';
import { removeDir, startBaton, stopBaton, tempDataDir, WRITER, type RunningServer } from '../../support/crash-server.js';

const TIMES = 20;
const MiB = 1024 * 1024;
const READABLE_413 = '413 application/problem+json; charset=utf-8 payload_too_large';

/** What a fetch got: the status, media type and problem code, or the network error. */
async function outcome(url: string, init: RequestInit): Promise<string> {
  try {
    const res = await fetch(url, init);
    const problem = (await res.json()) as { code?: string };
    return `${res.status} ${res.headers.get('content-type')} ${problem.code}`;
  } catch (error) {
    return `${String(error)}: ${String((error as Error).cause)}`;
  }
}

/** The bytes as a stream of 64 KiB chunks, so fetch sends them chunked, without a content length. */
function chunked(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (let offset = 0; offset < bytes.length; offset += 64 * 1024) controller.enqueue(bytes.subarray(offset, offset + 64 * 1024));
      controller.close();
    },
  });
}

describe('a body over the limit, over a real socket', () => {
  let server: RunningServer | undefined;
  let dir: string | undefined;
  const body = JSON.stringify({ taskId: 'too-large', agentId: 'a', extensions: { blob: 'x'.repeat(3 * MiB) } });

  beforeAll(async () => {
    dir = tempDataDir('baton-body-limit-');
    server = await startBaton(dir);
  });

  afterAll(async () => {
    await stopBaton(server?.child);
    removeDir(dir);
  });

  it(`answers 3 MiB sent by fetch with a content length with a readable 413 problem+json, ${TIMES} times out of ${TIMES}`, async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < TIMES; i++) {
      outcomes.push(await outcome(`${server!.url}/v1/checkpoints`, { method: 'POST', headers: { ...WRITER, 'content-type': 'application/json' }, body }));
    }
    expect(outcomes).toEqual(Array.from({ length: TIMES }, () => READABLE_413));
  });

  it(`answers 3 MiB sent by fetch chunked (read until past the limit) with a readable 413 problem+json, ${TIMES} times out of ${TIMES}`, async () => {
    const bytes = new TextEncoder().encode(body);
    const outcomes: string[] = [];
    for (let i = 0; i < TIMES; i++) {
      const init: RequestInit & { duplex: 'half' } = { method: 'POST', headers: { ...WRITER, 'content-type': 'application/json' }, body: chunked(bytes), duplex: 'half' };
      outcomes.push(await outcome(`${server!.url}/v1/checkpoints`, init));
    }
    expect(outcomes).toEqual(Array.from({ length: TIMES }, () => READABLE_413));
  });

  it('still takes a checkpoint on the next request', async () => {
    const res = await fetch(`${server!.url}/v1/checkpoints`, {
      method: 'POST',
      headers: { ...WRITER, 'content-type': 'application/json' },
      body: JSON.stringify({ taskId: 'after-too-large', agentId: 'a' }),
    });
    expect(res.status).toBe(201);
  });

  // Past the limit the answer may be lost to the reset, as it was before for every large body; only the bound is certain.
  it('reads no more than its drain limit of an endless upload, then closes the connection', async () => {
    const { port } = new URL(server!.url);
    const cap = drainLimits(2 * MiB).maxBytes;
    const declared = 1024 * MiB;
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('data', () => undefined);
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.write(
      `POST /v1/checkpoints HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${WRITER.authorization}\r\n` +
        `content-type: application/json\r\ncontent-length: ${declared}\r\n\r\n`,
    );
    // Write until the server closes: it must do so long before the declared length.
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    let sent = 0;
    let open = true;
    void closed.then(() => (open = false));
    while (open && sent < declared) {
      const flushed = socket.write(chunk);
      sent += chunk.length;
      if (!flushed) await new Promise((resolve) => socket.once('drain', resolve).once('close', resolve));
    }
    await closed;
    expect(sent, 'bytes sent before the server closed').toBeLessThan(declared);
    expect(sent).toBeGreaterThan(cap);
  });
});
