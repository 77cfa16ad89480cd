/**
 * Schemathesis against `/openapi.json` of a running Baton (issue 46,
 * `docs/reliability.md`): every operation, with an admin token, its
 * examples drawn from the document; the stateful phase follows the
 * document's links from a create to the operations on what it made. Checks:
 * no server error, every answer's status, media type and body as the
 * document states them. Prints operations × cases, the failures, and the
 * server errors the service logged, and fails when there is any.
 *
 *   npm run fuzz:api                 the long run (about 5 minutes)
 *   node scripts/fuzz-api.mjs --short   a bounded run for CI (about 1 minute)
 *
 * Schemathesis is installed from the Python package index into
 * `.tmp/venv-fuzz/` on first use (apart from the Python package's `.tmp/venv`) (python3 with venv and pip must be there).
 * The server is this checkout's `src/main.ts` on a free port, with a data
 * directory of its own, removed after the run. FUZZ_SEED fixes the seed.
 */
/* global console, fetch, process, setTimeout, URL */
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCHEMATHESIS = 'schemathesis==4.32.5';
const root = fileURLToPath(new URL('..', import.meta.url));
const venv = join(root, '.tmp', 'venv-fuzz');
const st = join(venv, 'bin', 'schemathesis');
const short = process.argv.includes('--short');
const seed = process.env.FUZZ_SEED ?? String(Date.now() % 1_000_000);
const ADMIN = 'fuzz-admin-0123456789abcdef';
const CHECKS = 'not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance';

/**
 * The passes: everything at once, then the stateful phase again from a
 * create (a walk from another root rarely reaches one), with longer walks.
 * One worker: with two, Hypothesis's lambda descriptions (ast.parse on two
 * threads) fail now and then with "AST constructor recursion depth
 * mismatch" on Python 3.11, an error of the tool that skips an operation.
 */
const PASSES = short
  ? [{ name: 'all phases', args: ['--max-examples', '10'] }]
  : [
      { name: 'all phases', args: ['--max-examples', '300'] },
      { name: 'stateful, from a create', args: ['--phases', 'stateful', '--mode', 'positive', '--max-examples', '400', '--exclude-path-regex', '/recoveries$'], config: '[phases.stateful]\nmax-steps = 40\n' },
    ];

function ensureSchemathesis() {
  if (existsSync(st)) return;
  console.error(`installing ${SCHEMATHESIS} into ${venv}`);
  execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
  execFileSync(join(venv, 'bin', 'pip'), ['install', '--quiet', SCHEMATHESIS], { stdio: 'inherit' });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startBaton(dir) {
  const port = await freePort();
  const log = join(dir, 'server.log');
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', BATON_DATA_DIR: join(dir, 'data'), BATON_TOKENS: `admin:${ADMIN}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = createWriteStream(log);
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    if (child.exitCode !== null) throw new Error(`Baton exited at start: ${readFileSync(log, 'utf8')}`);
    const up = await fetch(`${url}/healthz`).then((res) => res.ok).catch(() => false);
    if (up) break;
    if (tries > 600) throw new Error('Baton did not answer /healthz within 60 s.');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, url, log };
}

/** Runs one pass; resolves with its figures, read from schemathesis's summary. */
function runPass(url, dir, pass) {
  const config = join(dir, 'schemathesis.toml');
  writeFileSync(config, pass.config ?? '');
  const args = ['--config-file', config, 'run', `${url}/openapi.json`, '-H', `Authorization: Bearer ${ADMIN}`, '--checks', CHECKS, '--workers', '1', '--seed', seed, '--continue-on-failure', '--no-color', ...pass.args];
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(st, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk.toString()));
    child.stderr.on('data', (chunk) => (output += chunk.toString()));
    child.on('exit', (code) => {
      const tested = Number(/Tested: (\d+)/.exec(output)?.[1] ?? 0);
      const cases = Number(/(\d+) generated/.exec(output)?.[1] ?? 0);
      const summary = /={3,} (.*) in [\d.]+s =+/.exec(output)?.[1] ?? '';
      const failures = Number(/(\d+) failures?/.exec(summary)?.[1] ?? 0);
      const errors = Number(/(\d+) errors?/.exec(summary)?.[1] ?? 0);
      const links = /API Links: +(\d+) covered \/ (\d+) selected/.exec(output);
      const failing = [...output.matchAll(/^_{3,} (.+?) _{3,}$/gm)].map((m) => m[1]);
      resolve({ name: pass.name, code, tested, cases, failures, errors, failing, links: links ? `${links[1]}/${links[2]}` : '-', seconds: (Date.now() - started) / 1000, output });
    });
  });
}

ensureSchemathesis();
const dir = mkdtempSync(join(tmpdir(), 'baton-fuzz-'));
let baton;
let failed = false;
try {
  baton = await startBaton(dir);
  console.log(`schemathesis ${SCHEMATHESIS.split('==')[1]} against ${baton.url}/openapi.json, seed ${seed}, ${short ? 'short' : 'long'} run`);
  for (const pass of PASSES) {
    const result = await runPass(baton.url, dir, pass);
    console.log(
      `${result.name}: ${result.tested} operations × ${result.cases} cases (${result.tested > 0 ? Math.round(result.cases / result.tested) : 0} an operation), links covered ${result.links}, ${result.seconds.toFixed(1)} s, ${result.failures} failures, ${result.errors} errors of the tool`,
    );
    for (const name of result.failing) console.log(`  failing: ${name}`);
    if (result.code !== 0 || result.failures > 0 || result.errors > 0 || result.tested === 0) {
      failed = true;
      const from = Math.max(result.output.indexOf(' FAILURES '), result.output.indexOf(' ERRORS '));
      console.log(from >= 0 ? result.output.slice(from - 40) : result.output);
      mkdirSync(join(root, '.tmp'), { recursive: true });
      writeFileSync(join(root, '.tmp', `fuzz-api-${seed}.txt`), result.output);
    }
  }
  const errors = readFileSync(baton.log, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"level":50') || line.includes('"level":60'));
  console.log(`server errors logged: ${errors.length}`);
  for (const line of errors.slice(0, 10)) console.log(`  ${line.slice(0, 400)}`);
  if (errors.length > 0) failed = true;
} finally {
  baton?.child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 500));
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
