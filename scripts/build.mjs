/**
 * Compiles `src/` to JavaScript, one file per module (the layout is kept,
 * so paths relative to a module still resolve), for `npm start`: the
 * service then runs plain JavaScript, without a TypeScript loader thread in
 * the process and without the loader's name-keeping wrappers around every
 * function. esbuild transpiles only; `npm run typecheck` checks types.
 * Runs before every `npm start` (`prestart`), so `dist/` never lags behind
 * the sources. It then makes sure of the console's bundle in
 * `dist/console/` (src/http/console-bundle.ts, the same code the server
 * runs at start).
 *
 * Several `npm start`s may run at once from one install (instances of one
 * host on their own ports): a build never changes files another process
 * may be loading. Each build goes to a directory named for the hash of its
 * inputs, `dist.<hash>/`, written under a temporary name and renamed into
 * place whole; `dist` is a symbolic link to it, replaced by a rename, which
 * is atomic. A process resolves its modules through the link once, at
 * start (Node loads a module by its real path), so it keeps loading from
 * its own build whatever later builds do. A build whose directory exists
 * already is skipped: the link is only pointed at it. Older builds are
 * removed, but the three newest are kept for servers still running them.
 *
 *   node scripts/build.mjs
 */
/* global console, performance, process, URL */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, version as esbuildVersion } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const link = join(root, 'dist');
/** Marks a build directory as whole: written last, before the rename. */
const COMPLETE = '.complete';
/** Builds kept besides the current one, for servers started from them. */
const KEPT = 3;
/** A temporary build directory older than this is a crashed build's. */
const STALE_MS = 10 * 60_000;

/** Every TypeScript module under `dir`, declarations left out, in a stable order. */
function modules(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return modules(path);
      return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
    });
}

/** The hash of everything a build is made from: this script, esbuild's version, and every module's path and contents. */
function inputsHash(entryPoints) {
  const hash = createHash('sha256').update(readFileSync(fileURLToPath(import.meta.url))).update(esbuildVersion);
  for (const path of entryPoints) hash.update(relative(root, path)).update('\0').update(readFileSync(path)).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** Points `dist` at `name` by renaming a new link over it; a `dist` left a real directory by an older build is moved aside first. */
function pointAt(name) {
  const current = lstatSync(link, { throwIfNoEntry: false });
  if (current?.isSymbolicLink() && readlinkSync(link) === name) return;
  if (current !== undefined && !current.isSymbolicLink()) {
    try {
      renameSync(link, join(root, `dist.old-${process.pid}`));
    } catch (error) {
      // Another build moved it first.
      if (error.code !== 'ENOENT') throw error;
    }
  }
  const next = join(root, `dist.link-${process.pid}`);
  rmSync(next, { force: true });
  symlinkSync(name, next);
  renameSync(next, link);
}

/** Removes builds other than the newest `KEPT` and `name`, directories moved aside, and crashed builds' temporary directories. */
function removeOld(name) {
  const now = Date.now();
  const entries = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name.startsWith('dist.') && entry.name !== name)
    .map((entry) => ({ name: entry.name, mtime: statSync(join(root, entry.name)).mtimeMs }));
  const builds = entries.filter((entry) => /^dist\.[0-9a-f]{16}$/.test(entry.name)).sort((a, b) => b.mtime - a.mtime);
  const doomed = [
    ...builds.slice(KEPT),
    ...entries.filter((entry) => entry.name.startsWith('dist.old-')),
    ...entries.filter((entry) => /\.tmp-\d+$/.test(entry.name) && now - entry.mtime > STALE_MS),
  ];
  for (const entry of doomed) rmSync(join(root, entry.name), { recursive: true, force: true });
}

const started = performance.now();
const entryPoints = modules(src);
const name = `dist.${inputsHash(entryPoints)}`;
const target = join(root, name);
if (existsSync(join(target, COMPLETE))) {
  console.error(`${relative(root, src)}/ unchanged since ${name}/ was built; using it`);
} else {
  const temporary = join(root, `${name}.tmp-${process.pid}`);
  rmSync(temporary, { recursive: true, force: true });
  await build({
    entryPoints,
    outdir: temporary,
    outbase: src,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    bundle: false,
    sourcemap: false,
    logLevel: 'warning',
  });
  await makeConsole(temporary);
  writeFileSync(join(temporary, COMPLETE), `${new Date().toISOString()}\n`);
  try {
    renameSync(temporary, target);
    console.error(`built ${entryPoints.length} modules from ${relative(root, src)}/ into ${name}/ in ${Math.round(performance.now() - started)} ms`);
  } catch (error) {
    // Another build of the same sources landed first: it is the same build.
    rmSync(temporary, { recursive: true, force: true });
    if (!existsSync(join(target, COMPLETE))) throw error;
  }
}
pointAt(name);
// The console's sources may have changed without the service's: the bundle is made sure of in place, file by whole file.
await makeConsole(target);
removeOld(name);

/** Makes sure of the console bundle in `dir/console`, with the bundler of that build. */
async function makeConsole(dir) {
  const { consoleBundle } = await import(new URL(`file://${join(dir, 'http', 'console-bundle.js')}`).href);
  const consoleStarted = performance.now();
  const log = { info: () => undefined, warn: (fields, message) => console.error(message), error: (fields, message) => console.error(message, fields.err) };
  const bundle = await consoleBundle({ out: join(dir, 'console'), log });
  if (bundle === undefined || !existsSync(join(bundle, 'index.html'))) process.exitCode = 1;
  else if (performance.now() - consoleStarted > 20) console.error(`console bundle in ${relative(root, bundle)}/ ready in ${Math.round(performance.now() - consoleStarted)} ms`);
}
