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

/**
 * The longest stretches of samples in a row that are not `(idle)` or
 * `(program)`: how long the thread stayed busy without a turn free for the
 * next request, with the functions (self time) that filled each.
 */
export function busyStretches(profile: Profile, top = 8, functions = 5): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const nameOf = (id: number): string => {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    return `${functionName || '(anonymous)'} ${url.replace(/^file:\/\/.*?\/(node_modules|src|dist[^/]*)\//, '$1/')}:${lineNumber + 1}`;
  };
  const idle = (id: number): boolean => ['(idle)', '(program)'].includes(byId.get(id)!.callFrame.functionName);
  const stretches: Array<{ us: number; self: Map<string, number> }> = [];
  let current: { us: number; self: Map<string, number> } | undefined;
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    if (idle(id)) {
      if (current !== undefined) stretches.push(current);
      current = undefined;
      continue;
    }
    current ??= { us: 0, self: new Map() };
    const delta = profile.timeDeltas[i] ?? 0;
    current.us += delta;
    const name = nameOf(id);
    current.self.set(name, (current.self.get(name) ?? 0) + delta);
  }
  if (current !== undefined) stretches.push(current);
  const lines = ['longest busy stretches'];
  for (const { us, self } of stretches.sort((a, b) => b.us - a.us).slice(0, top)) {
    const parts = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, functions);
    lines.push(`  ${(us / 1000).toFixed(1).padStart(6)} ms: ${parts.map(([name, t]) => `${name} ${(t / 1000).toFixed(1)}`).join('; ')}`);
  }
  return lines.join('\n');
}

if (process.argv[1]?.endsWith('profile-summary.ts') && process.argv[2]) {
  console.log(summarize(JSON.parse(readFileSync(process.argv[2], 'utf8')) as Profile, Number(process.argv[3] ?? 40)));
}
