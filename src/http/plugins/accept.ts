/**
 * `Accept` on reads: a GET or HEAD whose `Accept` admits none of what the
 * route answered is refused with 406 `not_acceptable` (RFC 9110 §12.5.1),
 * rather than sent a media type the client said it cannot read. Routes that
 * offer several types (audit as NDJSON, events as SSE) pick one from `Accept`
 * themselves; this check only sees their choice. Writes are not checked: their
 * change is made before the answer exists, and a refusal then would hide it.
 * Problems are sent whatever `Accept` says, as RFC 9457 clients expect.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../../errors.js';

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

/** Headers describing the answer the 406 replaces (and Baton's own, about that answer); the 406 has no representation. */
const REPRESENTATION_HEADERS = ['etag', 'last-modified', 'location', 'content-disposition'];
const isRepresentationHeader = (name: string): boolean => REPRESENTATION_HEADERS.includes(name) || name.startsWith('baton-');

function parseAccept(header: string): MediaRange[] {
  return header.split(',').flatMap((part) => {
    const [range, ...params] = part.split(';');
    const [type, subtype, ...rest] = (range ?? '').trim().toLowerCase().split('/');
    if (!type || !subtype || rest.length > 0) return [];
    const qParam = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    return Number.isFinite(q) ? [{ type, subtype, q }] : [];
  });
}

/**
 * Whether `header` admits `mediaType` (an essence such as `application/json`):
 * the most specific range that matches it decides, and q=0 refuses. A header
 * with no well-formed range says nothing, so it admits everything.
 */
export function acceptable(header: string, mediaType: string): boolean {
  const ranges = parseAccept(header);
  if (ranges.length === 0) return true;
  const [type, subtype] = mediaType.toLowerCase().split('/');
  let best: { specificity: number; q: number } | undefined;
  for (const range of ranges) {
    const specificity =
      range.type === type && range.subtype === subtype ? 2 : range.type === type && range.subtype === '*' ? 1 : range.type === '*' && range.subtype === '*' ? 0 : -1;
    if (specificity < 0) continue;
    if (best === undefined || specificity > best.specificity || (specificity === best.specificity && range.q > best.q)) best = { specificity, q: range.q };
  }
  return best !== undefined && best.q > 0;
}

async function accept(app: FastifyInstance): Promise<void> {
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return payload;
    if (reply.statusCode < 200 || reply.statusCode >= 300) return payload;
    const header = request.headers.accept;
    const contentType = reply.getHeader('content-type');
    if (typeof header !== 'string' || typeof contentType !== 'string') return payload;
    const essence = contentType.split(';')[0]!.trim();
    if (acceptable(header, essence)) return payload;
    for (const name of Object.keys(reply.getHeaders())) if (isRepresentationHeader(name.toLowerCase())) reply.removeHeader(name);
    const stream = payload as { destroy?: () => void } | null;
    if (typeof stream?.destroy === 'function') stream.destroy();
    throw new AppError('not_acceptable', { extra: { available: essence } });
  });
}

export const acceptPlugin = fp(accept, { name: 'baton-accept', fastify: '5.x' });
