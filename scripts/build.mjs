/**
 * Compiles `src/` to JavaScript in `dist/`, one file per module (the layout
 * is kept, so paths relative to a module still resolve), for `npm start`:
 * the service then runs plain JavaScript, without a TypeScript loader thread
 * in the process and without the loader's name-keeping wrappers around every
 * function. esbuild transpiles only; `npm run typecheck` checks types.
 * Runs before every `npm start` (`prestart`) and takes well under a second,
 * so `dist/` never lags behind the sources.
 *
 *   node scripts/build.mjs
 */
/* global console, performance, URL */
import { readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const out = join(root, 'dist');

/** Every TypeScript module under `dir`, declarations left out. */
function modules(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return modules(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const started = performance.now();
const entryPoints = modules(src);
rmSync(out, { recursive: true, force: true });
await build({
  entryPoints,
  outdir: out,
  outbase: src,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  bundle: false,
  sourcemap: false,
  logLevel: 'warning',
});
console.error(`built ${entryPoints.length} modules from ${relative(root, src)}/ into ${relative(root, out)}/ in ${Math.round(performance.now() - started)} ms`);
