/**
 * Compiles `src/` to JavaScript in `dist/`, one file per module (the layout
 * is kept, so paths relative to a module still resolve), for `npm start`:
 * the service then runs plain JavaScript, without a TypeScript loader thread
 * in the process and without the loader's name-keeping wrappers around every
 * function. esbuild transpiles only; `npm run typecheck` checks types.
 * Runs before every `npm start` (`prestart`) and takes well under a second,
 * so `dist/` never lags behind the sources. It then makes sure of the
 * console's bundle in `dist/console/` (src/http/console-bundle.ts, the same
 * code the server runs at start), which it leaves in place: a server
 * already running from this checkout may be serving it.
 *
 *   node scripts/build.mjs
 */
/* global console, performance, process, URL */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
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
mkdirSync(out, { recursive: true });
for (const entry of readdirSync(out, { withFileTypes: true }).filter((e) => e.name !== 'console')) rmSync(join(out, entry.name), { recursive: true, force: true });
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

const { consoleBundle } = await import(new URL('../dist/http/console-bundle.js', import.meta.url).href);
const consoleStarted = performance.now();
const bundle = await consoleBundle({ log: { info: () => undefined, warn: (fields, message) => console.error(message), error: (fields, message) => console.error(message, fields.err) } });
if (bundle === undefined || !existsSync(join(bundle, 'index.html'))) process.exitCode = 1;
else console.error(`console bundle in ${relative(root, bundle)}/ ready in ${Math.round(performance.now() - consoleStarted)} ms`);
