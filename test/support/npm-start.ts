/**
 * The server as a user starts it: `npm start` (npm, a shell, then the
 * compiled server), from the repository's root.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { logLines, until } from './crash-server.js';

export interface NpmStarted {
  /** The npm process (the server is its grandchild). */
  npm: ChildProcess;
  /** Everything npm and the server printed so far. */
  output: () => string;
  url: string;
  port: number;
  /** The server's own pid, from its log lines: pino stamps each with the pid of the process that wrote it. */
  serverPid: number;
}

/**
 * Runs `npm start` with `env` over the test's environment (port 0, log level
 * info), and resolves once the server listens. `started` is told the npm
 * process at once, so that the caller can stop it whatever happens next.
 */
export async function npmStart(env: Record<string, string>, started: (npm: ChildProcess) => void, timeoutMs = 60_000): Promise<NpmStarted> {
  const npm = spawn('npm', ['start'], { env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  started(npm);
  let output = '';
  npm.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await until(() => /Server listening at http:\/\/127\.0\.0\.1:\d+/.test(output), 'the server listens', timeoutMs);
  const url = /Server listening at (http:\/\/127\.0\.0\.1:(\d+))/.exec(output)!;
  const serverPid = (logLines(output).find((line) => line.msg?.startsWith('Server listening')) as { pid?: number } | undefined)?.pid;
  if (serverPid === undefined) throw new Error(`The server logged no pid: ${output}`);
  return { npm, output: () => output, url: url[1]!, port: Number(url[2]), serverPid };
}
