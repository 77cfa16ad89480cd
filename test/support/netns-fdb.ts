/**
 * A FoundationDB server of the partition scenarios' own, on a node of the
 * topology (`netns.ts`): `fdbserver` from `FDB_SERVER_BIN` on the node's
 * address, port 4500, a fresh data directory, a cluster file
 * `partition:<random>@<address>:4500`, and a new single-process database
 * (`configure new single memory`). The cluster file is what every Baton
 * instance is given; the test process itself is not on the bridge and never
 * opens it. The build used here may be unoptimised: each step waits a
 * minute before it gives up.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stopBaton } from './crash-server.js';
import type { Topology } from './netns.js';

export const FDB_PORT = 4500;
const STEP_MS = 60_000;

export function fdbServerBin(): string {
  return process.env.FDB_SERVER_BIN ?? '/usr/sbin/fdbserver';
}

/** `FDB_CLI_BIN`, or the `fdbcli` beside the server binary, or the packaged one. */
export function fdbCliBin(): string {
  if (process.env.FDB_CLI_BIN) return process.env.FDB_CLI_BIN;
  const beside = join(dirname(fdbServerBin()), 'fdbcli');
  return existsSync(beside) ? beside : '/usr/bin/fdbcli';
}

export interface FdbNode {
  readonly clusterFile: string;
  /** What the server printed so far (its trace files are in its log directory). */
  output(): string;
  stop(): Promise<void>;
}

/** Runs `fdbcli --exec command` on `node`; answers its exit code and output. */
function fdbcli(topology: Topology, node: string, clusterFile: string, command: string): Promise<{ code: number | null; output: string }> {
  const child = topology.spawn(node, fdbCliBin(), ['-C', clusterFile, '--exec', command, '--timeout', String(STEP_MS / 1000)]);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STEP_MS + 5_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Starts the server on `node`, with its files under `dir`, and resolves once the new database is available. */
export async function startFdbNode(topology: Topology, node: string, dir: string): Promise<FdbNode> {
  const { address } = topology.node(node);
  const data = join(dir, 'fdb-data');
  const logs = join(dir, 'fdb-logs');
  mkdirSync(data, { recursive: true });
  mkdirSync(logs, { recursive: true });
  const clusterFile = join(dir, 'fdb.cluster');
  writeFileSync(clusterFile, `partition:${randomBytes(8).toString('hex')}@${address}:${FDB_PORT}\n`);
  const server = topology.spawn(node, fdbServerBin(), ['-C', clusterFile, '-p', `${address}:${FDB_PORT}`, '-d', data, '-L', logs]);
  let output = '';
  server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const handle: FdbNode = { clusterFile, output: () => output, stop: () => stopBaton(server) };
  try {
    const deadline = Date.now() + STEP_MS;
    for (;;) {
      if (server.exitCode !== null) throw new Error(`fdbserver exited with code ${server.exitCode}: ${output}`);
      const configured = await fdbcli(topology, node, clusterFile, 'configure new single memory');
      // A retry after a first attempt that timed out but went through finds the database made.
      if (configured.code === 0 || /already exists/i.test(configured.output)) break;
      if (Date.now() > deadline) throw new Error(`fdbcli could not create the database: ${configured.output}`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    for (;;) {
      const status = await fdbcli(topology, node, clusterFile, 'status minimal');
      if (/The database is available/.test(status.output)) return handle;
      if (Date.now() > deadline + STEP_MS) throw new Error(`The new database did not become available: ${status.output}`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  } catch (error) {
    await handle.stop();
    throw error;
  }
}
