import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/** Starts a process: `spawn` itself, or the same inside a network namespace (`Topology.spawn`, `test/support/netns.ts`). */
export type Launcher = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

/**
 * Starts `src/main.ts` as `npm start` does, on a free port, and resolves with
 * its base URL: the address it listens on (127.0.0.1 unless `HOST` says
 * otherwise) and its port.
 */
export function startServer(env: Record<string, string>, args: readonly string[] = [], launch: Launcher = spawn): { child: ChildProcess; url: Promise<string>; output: () => string } {
  const child = launch(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    env: { ...process.env, PORT: "0", LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = /Server listening at (http:\/\/\d+\.\d+\.\d+\.\d+:\d+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`The server exited with code ${code}: ${output}`)));
  });
  return { child, url, output: () => output };
}
