/**
 * Attributes a V8 .cpuprofile of the server to the parts of Baton that own
 * its samples: each rule, in order, looks through a sample's whole stack
 * (innermost frame first), and the first rule with a match names the
 * sample; so canonical JSON under the audit entry counts as the audit
 * entry's, and tuple packing under the term index as the term index's.
 * With the event loop's µs per request (the bench's `loop us/req`), shares
 * are also given in µs a request.
 *
 *   npx tsx loadtest/lib/profile-parts.ts <file.cpuprofile> [loop µs per request] [seconds to skip]
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import type { Profile, Node } from './profile-summary.js';

type Rule = [part: string, matches: (fn: string, url: string) => boolean];

const RULES: Rule[] = [
  ['garbage collection', (fn) => fn === '(garbage collector)'],
  ['idle (waiting for commits)', (fn) => fn === '(idle)'],
  ['term index (tokenizing, runs)', (_, url) => /repository\/terms\.js|domain\/terms\.js/.test(url)],
  ['record compression', (_, url) => /compression\.js|zlib-engine\.js|zstd-engine\.js|compression-worker\.js/.test(url)],
  ['checkpoint canonical JSON + SHA-256', (fn) => fn === 'hashCheckpoint' || fn === 'toStored'],
  ['audit entry (canonical JSON, chain hash)', (_, url) => /domain\/audit\.js|audit-log\.js/.test(url)],
  ['event (CloudEvent, outbox)', (fn, url) => /outbox\.js/.test(url) || fn === 'cloudEvent'],
  ['secondary index keys', (_, url) => /repository\/indexes\.js/.test(url)],
  ['task head', (_, url) => /repository\/tasks\.js/.test(url)],
  ['record reads (decode, verify)', (fn) => fn === 'verified' || fn === 'verifyStored' || fn === 'decodeRecord'],
  ['store: commit hand-off, pending overlay', (fn, url) => /store\/lmdb(\.js|-pending)|lmdb\/write\.js/.test(url) && fn !== 'get'],
  ['store: reads', (_, url) => /store\/lmdb-(transaction|reads)\.js|lmdb\/read\.js/.test(url)],
  ['keys and values (tuple packing, MessagePack)', (_, url) => /store\/keyspace\.js|codec\.js|msgpack/.test(url)],
  ['zod validation', (_, url) => /zod/.test(url) || /fastify\/lib\/validation\.js/.test(url)],
  ['JSON parse + body check', (fn, url) => /secure-json-parse/.test(url) || fn === 'parseJsonBody' || fn === 'representable'],
  ['plugins (auth, rate limit, metrics, tracing, request id)', (_, url) => /http\/plugins\/(auth|metrics|tracing|request-id|accept|body-drain)|rate-limit|prom-client|opentelemetry/.test(url)],
  ['logging', (_, url) => /pino/.test(url)],
  ['ids (UUIDv7)', (_, url) => /domain\/ids\.js/.test(url)],
  ['service and route glue', (_, url) => /dist\/(service|http|domain|store)/.test(url)],
  ['Node HTTP, Fastify, streams', (fn, url) => /fastify|node:_http|node:net|stream|find-my-way|node:events|node:internal\/(timers|async|process)|node:buffer/.test(url) || fn === 'writev'],
];

export function parts(profile: Profile, loopUsPerRequest = 0, skipSeconds = 0): string {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  let all = 0;
  let at = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at < skipSeconds * 1e6) continue;
    all += delta;
    const stack: Node[] = [];
    for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parent.get(id)) stack.push(byId.get(id)!);
    const part = RULES.find(([, matches]) => stack.some((node) => matches(node.callFrame.functionName, node.callFrame.url)))?.[0] ?? 'other';
    totals.set(part, (totals.get(part) ?? 0) + delta);
  }
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .map(([part, t]) => `${((100 * t) / all).toFixed(1).padStart(5)} %${loopUsPerRequest ? `  ${((loopUsPerRequest * t) / all).toFixed(0).padStart(5)} µs` : ''}  ${part}`)
    .join('\n');
}

if (process.argv[1]?.endsWith('profile-parts.ts') && process.argv[2]) {
  console.log(parts(JSON.parse(readFileSync(process.argv[2], 'utf8')) as Profile, Number(process.argv[3] ?? 0), Number(process.argv[4] ?? 4)));
}
