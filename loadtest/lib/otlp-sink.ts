/**
 * A local OTLP/HTTP receiver for the benchmark's traced run: it reads and
 * drops what it is sent, answering as a collector would, and counts the
 * requests, so the traced server pays the whole cost of exporting.
 *
 * @module
 */
import { createServer, type Server } from 'node:http';

export interface OtlpSink {
  endpoint: string;
  requests(): number;
  bytes(): number;
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let requests = 0;
  let bytes = 0;
  const server: Server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      requests += 1;
      res.setHeader('content-type', req.headers['content-type'] ?? 'application/json');
      res.end(req.headers['content-type']?.includes('json') ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests: () => requests,
    bytes: () => bytes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
