/**
 * The console's built files (docs/console.md): `console/` bundled by esbuild
 * into `dist/console/` (`index.html`, `assets/console.js`,
 * `assets/console.css`, and `build.json`, which records the SHA-256 of every
 * file the bundle was made from). The server makes sure of them when it
 * starts: missing, or made from other sources than the ones on disk, they
 * are built again (about 100 ms). So `npm start`, `npx baton serve`, `tsx
 * src/main.ts` and a test run in a fresh clone all serve a console that
 * matches its sources, without a build step of their own; `npm start`'s
 * prestart builds it first anyway, so a production start finds it fresh.
 *
 * Several processes may start at once (test workers, instances on one
 * disk): every file is written to a temporary name and renamed over the old
 * one, so a reader sees a whole file, old or new, never half of one. Where
 * `dist/` cannot be written (a read-only image), the bundle goes to the
 * system's temporary directory instead.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout: this module is `src/http/` (tsx) or `dist/http/` (npm start), two levels down either way. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Raised when the rules of the build change, so that bundles made under the old rules are made again. */
const BUILD_RULES = 1;

export interface BundleLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface BundleOptions {
  /** The checkout holding `console/` (default: this one). */
  root?: string;
  /** Where to write the bundle (default: `<root>/dist/console`). */
  out?: string;
  log?: BundleLog;
}

interface Stamp {
  rules: number;
  /** Every input of the last build, path (relative to the root) to SHA-256. */
  inputs: Record<string, string>;
}

const quiet: BundleLog = { info: () => undefined, warn: () => undefined, error: () => undefined };
const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

function readStamp(out: string): Stamp | undefined {
  try {
    const stamp = JSON.parse(readFileSync(join(out, 'build.json'), 'utf8')) as Stamp;
    return stamp.rules === BUILD_RULES && typeof stamp.inputs === 'object' ? stamp : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the bundle in `out` was made from exactly the files now on disk. */
function isFresh(root: string, stamp: Stamp): boolean {
  for (const [path, digest] of Object.entries(stamp.inputs)) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(resolve(root, path));
    } catch {
      return false;
    }
    if (sha256(bytes) !== digest) return false;
  }
  return Object.keys(stamp.inputs).length > 0;
}

/** Writes `bytes` to `path` whole: a concurrent reader sees the old file or the new one. */
function writeWhole(path: string, bytes: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    writeFileSync(temporary, bytes);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

interface Built {
  files: { path: string; contents: Uint8Array }[];
  stamp: Stamp;
}

async function bundle(root: string): Promise<Built> {
  const source = join(root, 'console');
  const { build } = await import('esbuild');
  const result = await build({
    absWorkingDir: root,
    entryPoints: { console: join(source, 'src', 'main.ts'), styles: join(source, 'styles.css') },
    outdir: 'assets',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    // Evergreen browsers of 2024 on: AbortSignal.any (the client's streams) needs them.
    target: ['chrome116', 'firefox124', 'safari17.4'],
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  const html = readFileSync(join(source, 'index.html'));
  const names: Record<string, string> = { 'console.js': 'assets/console.js', 'styles.css': 'assets/console.css' };
  const files = result.outputFiles.map((file) => {
    const name = relative(join(root, 'assets'), file.path);
    const path = names[name];
    if (path === undefined) throw new Error(`esbuild wrote an unexpected file: ${name}`);
    return { path, contents: file.contents };
  });
  files.push({ path: 'index.html', contents: html });
  const inputs: Record<string, string> = {};
  for (const path of [...Object.keys(result.metafile.inputs), relative(root, join(source, 'index.html'))].sort()) {
    inputs[path] = sha256(readFileSync(resolve(root, path)));
  }
  return { files, stamp: { rules: BUILD_RULES, inputs } };
}

function writeBundle(out: string, built: Built): void {
  for (const file of built.files) writeWhole(join(out, file.path), file.contents);
  // The stamp goes last: a bundle without its stamp is built again, never taken for fresh.
  writeWhole(join(out, 'build.json'), `${JSON.stringify(built.stamp, null, 2)}\n`);
}

const UNWRITABLE = new Set(['EACCES', 'EPERM', 'EROFS']);

/**
 * The directory of a console bundle that matches the sources on disk,
 * building it when needed; undefined when there is neither a bundle nor
 * the sources to build one (the reason is logged).
 */
export async function consoleBundle(options: BundleOptions = {}): Promise<string | undefined> {
  const root = options.root ?? ROOT;
  const out = options.out ?? join(root, 'dist', 'console');
  const log = options.log ?? quiet;
  const stamp = readStamp(out);
  if (stamp !== undefined && isFresh(root, stamp)) return out;

  let built: Built;
  try {
    built = await bundle(root);
  } catch (error) {
    // A deployment may ship the bundle without its sources: serve what was built.
    if (stamp !== undefined) {
      log.warn({ dir: out, err: error }, 'the console could not be rebuilt from its sources; serving the bundle built before');
      return out;
    }
    log.error({ dir: join(root, 'console'), err: error }, 'the console could not be built; /console is not served');
    return undefined;
  }
  try {
    writeBundle(out, built);
    log.info({ dir: out }, 'console built');
    return out;
  } catch (error) {
    if (!UNWRITABLE.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
    const fallback = join(tmpdir(), `baton-console-${sha256(root).slice(0, 12)}`);
    writeBundle(fallback, built);
    log.warn({ dir: out, fallback }, 'the console bundle cannot be written beside the code; built in the temporary directory instead');
    return fallback;
  }
}

let shared: Promise<string | undefined> | undefined;

/** {@link consoleBundle} for this checkout, made sure of once per process however many apps it builds. */
export function sharedConsoleBundle(log?: BundleLog): Promise<string | undefined> {
  shared ??= consoleBundle(log ? { log } : {});
  return shared;
}
