/**
 * A client inside a network namespace (`netns.ts`), run there as its own
 * process: `node --import tsx test/support/netns-client.ts`. The test
 * process is in the root namespace, not on the partition's bridge, so every
 * request of a scenario is sent from a client node by this script, over the
 * node's own link: what a cut drops, it drops.
 *
 * It reads one request a line on stdin (`ClientRequest`), sends each at once
 * (several may be in flight), and prints one line per answer on stdout
 * (`ClientAnswer`): when the request was sent and answered, its status,
 * the headers the scenarios read, and the body. A request not answered
 * within its `timeoutMs` is printed without a status: it may or may not
 * have applied.
 */
import { createInterface } from 'node:readline';

export interface ClientRequest {
  id: number;
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
}

export interface ClientAnswer {
  id: number;
  invokedAt: number;
  answeredAt?: number;
  status?: number;
  etag?: string;
  body?: string;
  /** Why there is no answer: the timeout, or the connection's error. */
  error?: string;
}

async function send(request: ClientRequest): Promise<ClientAnswer> {
  const invokedAt = Date.now();
  try {
    const res = await fetch(request.url, {
      method: request.method,
      ...(request.headers ? { headers: request.headers } : {}),
      ...(request.body !== undefined ? { body: request.body } : {}),
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    const body = await res.text();
    return { id: request.id, invokedAt, answeredAt: Date.now(), status: res.status, ...(res.headers.get('etag') ? { etag: res.headers.get('etag')! } : {}), body };
  } catch (error) {
    return { id: request.id, invokedAt, error: error instanceof Error ? error.name : String(error) };
  }
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line.trim() === '') return;
  void send(JSON.parse(line) as ClientRequest).then((answer) => process.stdout.write(`${JSON.stringify(answer)}\n`));
});
lines.on('close', () => process.exit(0));
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
