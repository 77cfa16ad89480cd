#!/usr/bin/env node
// The `baton` command: runs src/cli/main.ts through tsx (a dependency), so it works in a fresh clone without a build.
import process from 'node:process';
import { register } from 'tsx/esm/api';

register();
const { run } = await import('../src/cli/main.ts');
await run(process.argv.slice(2));
