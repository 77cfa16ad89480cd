/**
 * `npm run bench:python`: the LangGraph (Python) savers benchmark,
 * `loadtest/python/langgraph_bench.py` (docs/performance.md). Builds
 * `dist/`, makes `.tmp/venv-bench` with the Python package and the savers it
 * is compared with (under `clients/python/constraints.txt`) when it is
 * missing, then runs the Python script; arguments and `BENCH_*` variables
 * pass through.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import process from 'node:process';

const VENV = '.tmp/venv-bench';

function run(command: string, args: string[]): void {
  const done = spawnSync(command, args, { stdio: 'inherit' });
  if (done.status !== 0) process.exit(done.status ?? 1);
}

run('node', ['scripts/build.mjs']);
if (!existsSync(`${VENV}/bin/python`)) {
  run('python3', ['-m', 'venv', VENV]);
  run(`${VENV}/bin/pip`, ['install', '-q', '-c', 'clients/python/constraints.txt', './clients/python[langgraph,bench]']);
}
run(`${VENV}/bin/python`, ['loadtest/python/langgraph_bench.py', ...process.argv.slice(2)]);
