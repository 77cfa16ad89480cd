// npm run bench:python: the LangGraph (Python) savers benchmark (loadtest/python/langgraph_bench.py).
// Builds dist/, makes .tmp/venv-bench with the Python package and the savers it is compared with (under
// clients/python/constraints.txt), then runs the Python script; its arguments and BENCH_* variables pass through.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const venv = '.tmp/venv-bench';
const run = (cmd, args) => {
  const done = spawnSync(cmd, args, { stdio: 'inherit' });
  if (done.status !== 0) process.exit(done.status ?? 1);
};
run('node', ['scripts/build.mjs']);
if (!existsSync(`${venv}/bin/python`)) {
  run('python3', ['-m', 'venv', venv]);
  run(`${venv}/bin/pip`, ['install', '-q', '-c', 'clients/python/constraints.txt', './clients/python[langgraph,bench]']);
}
run(`${venv}/bin/python`, ['loadtest/python/langgraph_bench.py', ...process.argv.slice(2)]);
