/**
 * The one error the client throws for an answer it did not want: the
 * service's RFC 9457 problem (docs/errors.md), with its members lifted onto
 * the error so callers can branch on `code`. Failures to reach the service at
 * all (after every retry) are thrown as fetch threw them, so a `BatonError`
 * always means "the service answered this".
 *
 * @module
 */

/** One offending field of a request, as the service names it (`executionState.phase`, `headers.if-match`). */
export interface FieldError {
  field: string;
  message: string;
}

/** An RFC 9457 problem document; some codes carry more members (e.g. `epoch`, `handoffId`). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  /** Stable: program against it, not against `title` or `detail`. */
  code: string;
  detail: string;
  instance?: string;
  requestId?: string;
  errors?: FieldError[];
  [member: string]: unknown;
}

/** The code of an answer that was not the problem document the service always sends (e.g. from a proxy in between). */
export const UNEXPECTED_RESPONSE = 'unexpected_response';

export class BatonError extends Error {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  /** Every offending field; empty when the problem names none. */
  readonly errors: readonly FieldError[];
  /** The whole problem document, with any members this class does not lift. */
  readonly problem: Problem;

  constructor(problem: Problem) {
    super(problem.detail);
    this.name = 'BatonError';
    this.problem = problem;
    this.status = problem.status;
    this.code = problem.code;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
  }

  /** The id the service logged the request under; quote it when reporting a problem. */
  get requestId(): string | undefined {
    return this.problem.requestId;
  }
}

/** Turns an error answer into a `BatonError`, reading its body. */
export async function errorFromResponse(response: Response): Promise<BatonError> {
  const text = await response.text().catch(() => '');
  const contentType = response.headers.get('content-type') ?? '';
  if (/^application\/(problem\+)?json/i.test(contentType)) {
    const parsed = parseJson(text);
    if (isProblem(parsed)) return new BatonError(parsed);
  }
  return unexpected(response.status, 'The service answered with a status the client did not ask for, without a problem document.', text);
}

/** A `BatonError` for an answer that is not what the protocol says (wrong status, media type or body). */
export function unexpected(status: number, detail: string, body?: string): BatonError {
  return new BatonError({
    type: 'about:blank',
    title: 'Unexpected response',
    status,
    code: UNEXPECTED_RESPONSE,
    detail,
    // A bounded excerpt, so a huge HTML error page does not end up in every log line.
    ...(body ? { body: body.slice(0, 2_000) } : {}),
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isProblem(value: unknown): value is Problem {
  if (typeof value !== 'object' || value === null) return false;
  const problem = value as Record<string, unknown>;
  return typeof problem.status === 'number' && typeof problem.code === 'string' && typeof problem.detail === 'string';
}
