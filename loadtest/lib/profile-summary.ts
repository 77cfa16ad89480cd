/**
 * Summarizes a V8 .cpuprofile: self time by function and by file or package.
 * `npx tsx loadtest/lib/profile-summary.ts <file.cpuprofile>` prints it.
 *
 * @module
 */
import { readFileSync } from 'node:fs';

export interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
export interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[] }

export function summarize(profile: Profile, top = 40): string {
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFn = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const node of profile.nodes) {
    const t = self.get(node.id) ?? 0;
    if (t === 0) continue;
    const url = node.callFrame.url.replace(/^file:\/\/.*?\/(node_modules|src)\//, '$1/');
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${url}:${node.callFrame.lineNumber + 1}`;
    byFn.set(fn, (byFn.get(fn) ?? 0) + t);
    const file = url.startsWith('node_modules/') ? url.split('/').slice(0, url.split('/')[1]!.startsWith('@') ? 3 : 2).join('/') : url || `(${node.callFrame.functionName})`;
    byFile.set(file, (byFile.get(file) ?? 0) + t);
  }
  const lines: string[] = [`total sampled ${(total / 1e6).toFixed(2)} s`];
  const list = (title: string, m: Map<string, number>) => {
    lines.push(title);
    for (const [k, v] of [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`);
  };
  list('self time by function', byFn);
  list('self time by file / package', byFile);
  return lines.join('\n');
}


if (process.argv[1]?.endsWith('profile-summary.ts') && process.argv[2]) {
  console.log(summarize(JSON.parse(readFileSync(process.argv[2], 'utf8')) as Profile, Number(process.argv[3] ?? 40)));
}
