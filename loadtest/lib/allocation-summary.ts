/**
 * Summarizes a sampling heap profile that counts collected objects too
 * (`allocation-sampler.mjs`): the bytes allocated per request, by the
 * function that allocated them and by the functions they were allocated
 * under, to find what feeds the garbage collector.
 *
 *   npx tsx loadtest/lib/allocation-summary.ts <file.heapprofile> <requests> [top]
 *
 * @module
 */
import { readFileSync } from 'node:fs';

interface HeapNode { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: HeapNode[] }
export interface HeapProfile { head: HeapNode }

const nameOf = ({ callFrame: frame }: HeapNode): string =>
  `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^file:\/\/.*?\/(node_modules|dist|src)(?:\.[0-9a-f]+)?\//, '$1/')}:${frame.lineNumber + 1}`;

export function summarizeAllocations(profile: HeapProfile, requests: number, top = 25): string {
  const self = new Map<string, number>();
  const under = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode, above: ReadonlySet<string>): void => {
    const name = nameOf(node);
    const path = new Set(above).add(name);
    total += node.selfSize;
    self.set(name, (self.get(name) ?? 0) + node.selfSize);
    for (const each of path) under.set(each, (under.get(each) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child, path);
  };
  walk(profile.head, new Set());
  const kb = (bytes: number) => `${(bytes / requests / 1024).toFixed(1).padStart(6)} KB`;
  const list = (title: string, m: Map<string, number>, keep: (name: string) => boolean) => [
    title,
    ...[...m].filter(([name]) => keep(name)).sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, bytes]) => `  ${kb(bytes)}  ${name}`),
  ];
  return [
    `allocated ${(total / 2 ** 20).toFixed(0)} MB over ${requests} requests: ${kb(total).trim()} a request`,
    ...list('allocated by function', self, () => true),
    ...list("allocated under Baton's functions", under, (name) => name.includes('dist/') || name.includes('src/')),
  ].join('\n');
}

if (process.argv[1]?.endsWith('allocation-summary.ts') && process.argv[2]) {
  console.log(summarizeAllocations(JSON.parse(readFileSync(process.argv[2], 'utf8')) as HeapProfile, Number(process.argv[3]), Number(process.argv[4] ?? 25)));
}
