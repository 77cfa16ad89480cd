/**
 * The JSON body parser for `application/json` and
 * `application/merge-patch+json`. Besides parsing, it refuses at the door
 * what could not be hashed or stored faithfully later: bytes that are not
 * UTF-8, numbers beyond a double, lone surrogates (RFC 8785 cannot
 * canonicalize them) and nesting deeper than {@link MAX_DEPTH}; and, as
 * secure-json-parse's `error` actions do, a member `__proto__` or a
 * `constructor` object with a `prototype` member, anywhere in the body.
 * Everything past this point can rely on plain JSON.
 *
 * The prototype keys are looked for in the walk that checks every value
 * anyway, not by secure-json-parse's two regular expressions over the
 * whole text (~9 µs of a create's event loop, `docs/performance.md`).
 *
 * @module
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, type FieldError } from '../../errors.js';
import { EMPTY_JSON, NOT_JSON, PROTOTYPE_KEY } from './errors.js';

export const JSON_CONTENT_TYPES = ['application/json', 'application/merge-patch+json'];

/** Deeper than any checkpoint needs, shallow enough for every recursive walk to stay safe. */
export const MAX_DEPTH = 64;

const utf8 = new TextDecoder('utf-8', { fatal: true });

function invalid(field: string, message: string): AppError {
  return new AppError('validation_failed', { errors: [{ field, message } satisfies FieldError] });
}

/** A body's first refusal: a prototype key anywhere before any value JSON canonicalization could not represent. */
function firstRefusal(value: unknown): FieldError | undefined {
  // The common case, a body with nothing wrong, is walked without building a path; only a failing body is walked again for it.
  if (representable(value, 0)) return undefined;
  return hasPrototypeKey(value) ? PROTOTYPE_KEY : locate(value, [], 0);
}

function representable(value: unknown, depth: number): boolean {
  if (depth > MAX_DEPTH) return false;
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value === 'string') return value.isWellFormed();
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!representable(value[i], depth + 1)) return false;
    return true;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const inner = (value as Record<string, unknown>)[key];
    if (!key.isWellFormed() || isPrototypeKey(key, inner) || !representable(inner, depth + 1)) return false;
  }
  return true;
}

/**
 * Whether member `key` with `value` could reach an object's prototype once
 * merged into another: `__proto__` (`JSON.parse` makes it an own member),
 * or `constructor` holding an object with its own `prototype`.
 */
function isPrototypeKey(key: string, value: unknown): boolean {
  if (key === '__proto__') return true;
  return key === 'constructor' && value !== null && typeof value === 'object' && Object.hasOwn(value, 'prototype');
}

/** Whether any object in `value` has a prototype key ({@link isPrototypeKey}); breadth first, no recursion, at any depth. */
function hasPrototypeKey(value: unknown): boolean {
  let next: unknown[] = [value];
  while (next.length > 0) {
    const nodes = next;
    next = [];
    for (const node of nodes) {
      if (node === null || typeof node !== 'object') continue;
      for (const key in node) {
        if (!Object.hasOwn(node, key)) continue;
        const inner = (node as Record<string, unknown>)[key];
        if (isPrototypeKey(key, inner)) return true;
        next.push(inner);
      }
    }
  }
  return false;
}

function locate(value: unknown, path: string[], depth: number): FieldError | undefined {
  const field = path.length === 0 ? 'body' : path.join('.');
  if (depth > MAX_DEPTH) return { field, message: `nests deeper than ${MAX_DEPTH} levels` };
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : { field, message: 'is a number too large to represent' };
  if (typeof value === 'string') return value.isWellFormed() ? undefined : { field, message: 'holds an unpaired UTF-16 surrogate' };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = locate(value[i], [...path, String(i)], depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (!key.isWellFormed()) return { field, message: 'has a member name with an unpaired UTF-16 surrogate' };
      const found = locate(inner, [...path, key], depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}

export function parseJsonBody(request: FastifyRequest, body: Buffer): unknown {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(String(request.headers['content-type'] ?? ''))?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) throw new AppError('unsupported_media_type', { detail: 'Send JSON as UTF-8.' });
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw invalid('body', 'is not valid UTF-8');
  }
  if (text.trim() === '') throw new AppError('validation_failed', { errors: [EMPTY_JSON] });
  let value: unknown;
  try {
    // A byte order mark the decoder left (a second one) is skipped, as secure-json-parse did.
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    throw new AppError('validation_failed', { errors: [NOT_JSON] });
  }
  const problem = firstRefusal(value);
  if (problem) throw invalid(problem.field, problem.message);
  return value;
}

export function registerJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(JSON_CONTENT_TYPES, { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, parseJsonBody(request, body as Buffer));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
