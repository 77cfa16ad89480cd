import { spawn, type ChildProcess } from 'node:child_process';

/** Starts `src/main.ts` as `npm start` does, on a free port, and resolves with its base URL. */
export function startServer(env: Record<string, string>, args: readonly string[] = []): { child: ChildProcess; url: Promise<string>; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    env: { ...process.env, PORT: "0", LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`The server exited with code ${code}: ${output}`)));
  });
  return { child, url, output: () => output };
}
