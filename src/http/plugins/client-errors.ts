/**
 * Answers a request Node's HTTP parser refused before Fastify saw it (a
 * URL or headers over Node's 16 KB, bytes that are not HTTP, a request too
 * slow to arrive) with a problem document, as every other failure: Fastify's
 * own answer there is a JSON body of its own shape (found by schemathesis,
 * `docs/reliability.md`). The connection is closed after it.
 *
 * @module
 */
import type { Socket } from 'node:net';
import { ERRORS, type ErrorCode } from '../../errors.js';
import { PROBLEM_TYPE_BASE } from './errors.js';

/** What each parser failure is answered with; any other is a request that is not valid HTTP. */
const CODE_BY_NODE_ERROR: Readonly<Record<string, ErrorCode>> = {
  HPE_HEADER_OVERFLOW: 'headers_too_large',
  ERR_HTTP_REQUEST_TIMEOUT: 'request_timeout',
};

const REASONS: Readonly<Record<number, string>> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/** The raw HTTP answer to a client error with Node's code `nodeCode`. */
export function clientErrorAnswer(nodeCode: string | undefined): string {
  const code = CODE_BY_NODE_ERROR[nodeCode ?? ''] ?? 'validation_failed';
  const { status, title, message } = ERRORS[code];
  const problem = {
    type: `${PROBLEM_TYPE_BASE}${code}`,
    title,
    status,
    code,
    detail: message,
    ...(code === 'validation_failed' ? { errors: [{ field: 'request', message: 'The request is not valid HTTP/1.1.' }] } : {}),
  };
  const body = JSON.stringify(problem);
  return `HTTP/1.1 ${status} ${REASONS[status] ?? 'Bad Request'}\r\nContent-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** Fastify's `clientErrorHandler`: one problem document, then the connection closes. */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // An answer already begun on this connection cannot be followed by another.
  if (socket.writable && socket.bytesWritten === 0) socket.write(clientErrorAnswer(error.code));
  socket.destroy(error);
}
