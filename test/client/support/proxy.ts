/**
 * A small HTTP proxy on 127.0.0.1 in front of the real server, for what a
 * network does to a client: each request takes the next scripted action
 * (forward by default), every request is recorded with its headers, and
 * `cut()` breaks every open connection (an event stream mid-flight).
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export type Action =
  /** Pass the request on and its answer back. */
  | 'forward'
  /** Close the connection without an answer; the server never sees the request. */
  | 'drop'
  /** Pass the request on, let the server apply it, then close the connection without its answer. */
  | 'drop-answer'
  /** Answer 200 text/event-stream with one comment, then stay silent (a dead stream that looks alive). */
  | 'stall'
  /** Answer this instead of the server. */
  | { status: number; headers?: Record<string, string>; body?: string };

export interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  action: Action;
}

/** A problem document as the service would send it, for scripted answers. */
export function problemAnswer(status: number, code: string, headers: Record<string, string> = {}): Action {
  const body = JSON.stringify({ type: `https://baton.dev/problems/${code}`, title: code, status, code, detail: 'Scripted by the test proxy.' });
  return { status, headers: { 'content-type': 'application/problem+json', ...headers }, body };
}

export class ScriptedProxy {
  readonly seen: Seen[] = [];
  private readonly actions: Action[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly streams = new Set<IncomingMessage>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly upstream: URL,
  ) {
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void this.handle(req, res));
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  static async start(target: string): Promise<ScriptedProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('The proxy has no TCP address.');
    return new ScriptedProxy(server, `http://127.0.0.1:${address.port}`, new URL(target));
  }

  /** The next requests take these actions, in order; after them, requests are forwarded. */
  script(...actions: Action[]): void {
    this.actions.push(...actions);
  }

  /** Requests seen for `path` (without the query). */
  requests(method: string, path: string): Seen[] {
    return this.seen.filter((s) => s.method === method && s.url.split('?')[0] === path);
  }

  /** Answers being forwarded right now (event streams mostly). */
  openAnswers(): number {
    return this.streams.size;
  }

  /** Breaks every connection, both ways: clients see their streams end mid-flight. */
  cut(): void {
    for (const stream of this.streams) stream.destroy();
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { upstream } = this;
    const action = this.actions.shift() ?? 'forward';
    this.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, action });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (action === 'drop') {
      req.socket.destroy();
      return;
    }
    if (action === 'stall') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': connected\n\n');
      return;
    }
    if (typeof action === 'object') {
      res.writeHead(action.status, action.headers ?? {}).end(action.body ?? '');
      return;
    }
    const headers = { ...req.headers, host: upstream.host };
    delete headers.connection;
    const forwarded = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
      this.streams.add(answer);
      answer.on('close', () => this.streams.delete(answer));
      if (action === 'drop-answer') {
        // Read the whole answer first, so the server has certainly applied the request, then lose it.
        answer.resume();
        answer.on('end', () => req.socket.destroy());
        return;
      }
      const answerHeaders = { ...answer.headers };
      delete answerHeaders.connection;
      delete answerHeaders['transfer-encoding'];
      res.writeHead(answer.statusCode ?? 502, answerHeaders);
      answer.pipe(res);
      res.on('close', () => answer.destroy());
    });
    forwarded.on('error', () => req.socket.destroy());
    forwarded.end(body);
  }
}
