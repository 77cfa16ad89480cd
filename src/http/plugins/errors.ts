/**
 * Turns every failure into an RFC 9457 problem (`application/problem+json`)
 * with a stable `code` from the error table. Only the table's static sentences
 * and the facts an error chose to expose reach the caller; stacks and raw
 * messages of unexpected errors go to the log alone.
 *
 * @module
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, ERRORS, type ErrorCode, type FieldError } from '../../errors.js';
import { REQUEST_ID_HEADER } from './request-id.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';
export const PROBLEM_TYPE_BASE = 'https://baton.dev/problems/';

/** What an error becomes, before the request's own facts are added. */
interface Problem {
  code: ErrorCode;
  /** Only when it differs from the table's status (an unmapped 4xx from the framework). */
  status?: number;
  detail?: string;
  errors?: FieldError[];
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/**
 * The framework's own 4xx answers (from its parsers, router and plugins), by
 * status. Only statuses whose meaning is the same whoever raises them are
 * here: a 409 or 422 can only come from the service, which names its code.
 */
const CODE_BY_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: 'validation_failed',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'route_not_found',
  406: 'not_acceptable',
  412: 'version_conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  428: 'precondition_required',
  429: 'rate_limited',
};

/** Where Fastify found the invalid value, as a prefix of the field path. */
const FIELD_PREFIX: Readonly<Record<string, string>> = { body: '', querystring: 'query', params: 'params', headers: 'headers' };

const RESERVED_MEMBERS = new Set(['type', 'title', 'status', 'code', 'detail', 'instance', 'requestId', 'errors']);

/** The field errors of a body that cannot be taken as JSON, shared with the JSON body parser. */
export const NOT_JSON: FieldError = Object.freeze({ field: 'body', message: 'The body is not valid JSON.' });
export const EMPTY_JSON: FieldError = Object.freeze({ field: 'body', message: 'The body is empty, which is not valid JSON.' });
/** Valid JSON, but a key that could pollute prototypes in JavaScript consumers of the checkpoint. */
export const PROTOTYPE_KEY: FieldError = Object.freeze({
  field: 'body',
  message: 'The body has a __proto__ or constructor.prototype key, which is refused for safety; rename the key.',
});

function joinPath(prefix: string, segments: readonly string[]): string {
  const parts = prefix === '' ? segments : [prefix, ...segments];
  return parts.length === 0 ? 'body' : parts.join('.');
}

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

/** One entry per offending field; an unknown-keys issue names each key on its own. */
export function fieldErrors(issues: readonly ValidationIssue[], context: string | undefined): FieldError[] {
  const prefix = FIELD_PREFIX[context ?? 'body'] ?? context ?? '';
  return issues.flatMap((issue) => {
    const segments = (issue.instancePath ?? '').split('/').filter((segment) => segment !== '');
    const message = issue.message ?? 'Invalid value.';
    const keys = issue.params?.keys;
    if (issue.keyword === 'unrecognized_keys' && Array.isArray(keys) && keys.length > 0) {
      return keys.map((key) => ({ field: joinPath(prefix, [...segments, String(key)]), message }));
    }
    const missing = issue.params?.missingProperty;
    if (typeof missing === 'string') segments.push(missing);
    return [{ field: joinPath(prefix, segments), message }];
  });
}

function fastifyCode(error: Error): string | undefined {
  const code = (error as Partial<FastifyError>).code;
  return typeof code === 'string' ? code : undefined;
}

function fastifyStatus(error: Error): number | undefined {
  const status = (error as Partial<FastifyError>).statusCode;
  return typeof status === 'number' ? status : undefined;
}

/** Maps any error to a problem; pure, so the mapping is the same wherever it is used. */
export function toProblem(error: Error): Problem {
  if (error instanceof AppError) {
    // A 503 (store unavailable, queue full) passes: say when to try again.
    return { code: error.code, detail: error.detail, errors: error.errors, extra: error.extra, ...(error.status === 503 ? { headers: { 'retry-after': '1' } } : {}) };
  }
  const validation = (error as Partial<FastifyError>).validation;
  if (Array.isArray(validation)) {
    const context = (error as Partial<FastifyError>).validationContext;
    return { code: 'validation_failed', errors: fieldErrors(validation as ValidationIssue[], context) };
  }
  const code = fastifyCode(error);
  const status = fastifyStatus(error);
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'payload_too_large' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { code: 'unsupported_media_type' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { code: 'validation_failed', errors: [NOT_JSON] };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { code: 'validation_failed', errors: [EMPTY_JSON] };
    case 'FST_ERR_BAD_URL':
      return { code: 'validation_failed', errors: [{ field: 'url', message: 'The URL is not correctly percent-encoded.' }] };
  }
  if (error instanceof SyntaxError && status === 400) return { code: 'validation_failed', errors: [NOT_JSON] };
  if (status !== undefined && status >= 400 && status < 500) {
    const mapped = CODE_BY_STATUS[status] ?? 'validation_failed';
    // Fastify's own 4xx messages describe the request, never the service's internals.
    const detail = code?.startsWith('FST_') ? error.message : undefined;
    return { code: mapped, status: ERRORS[mapped].status === status ? undefined : status, detail };
  }
  return { code: 'internal_error' };
}

function extraMembers(extra: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!extra) return {};
  return Object.fromEntries(Object.entries(extra).filter(([key]) => !RESERVED_MEMBERS.has(key)));
}

/** Answers with the problem; the caller decides what to log. */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: Problem): FastifyReply {
  const entry = ERRORS[problem.code];
  const status = problem.status ?? entry.status;
  const body = {
    type: `${PROBLEM_TYPE_BASE}${problem.code}`,
    title: entry.title,
    status,
    code: problem.code,
    detail: problem.detail ? `${entry.message} ${problem.detail}` : entry.message,
    instance: request.url,
    requestId: request.id,
    ...(problem.errors ? { errors: problem.errors } : {}),
    ...extraMembers(problem.extra),
  };
  reply.code(status).header(REQUEST_ID_HEADER, request.id);
  for (const [name, value] of Object.entries(problem.headers ?? {})) reply.header(name, value);
  // A string payload bypasses any response schema of the route, which describes success, not problems.
  return reply.type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
}

function logProblem(request: FastifyRequest, error: Error, code: ErrorCode, status: number): void {
  if (status >= 500) {
    request.log.error({ err: error, code, status }, 'request failed');
  } else {
    request.log.info({ code, status, errorCode: fastifyCode(error) }, 'request rejected');
  }
}

/** Fastify's `frameworkErrors` constructor option: router failures that happen before any hook runs. */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const problem = toProblem(error);
  const status = problem.status ?? ERRORS[problem.code].status;
  logProblem(request, error, problem.code, status);
  sendProblem(request, reply, problem);
}

async function errors(app: FastifyInstance): Promise<void> {
  app.setErrorHandler<Error>((error, request, reply) => {
    const problem = toProblem(error);
    const status = problem.status ?? ERRORS[problem.code].status;
    logProblem(request, error, problem.code, status);
    if (reply.sent) return reply;
    return sendProblem(request, reply, problem);
  });

  app.setNotFoundHandler((request, reply) => {
    request.log.info({ code: 'route_not_found', status: 404 }, 'request rejected');
    return sendProblem(request, reply, { code: 'route_not_found' });
  });
}

export const errorsPlugin = fp(errors, { name: 'baton-errors', fastify: '5.x' });
