/**
 * The CLI's requests to a Baton server: `--url`/`--token` or `BATON_URL` and
 * `BATON_TOKEN`, and a problem answer turned into its exit code.
 *
 * @module
 */
import { CliError, EXIT } from './errors.js';

export interface ServerOptions {
  url?: string;
  token?: string;
}

export interface Server {
  url: string;
  token: string | undefined;
}

export function server(options: ServerOptions): Server {
  const url = (options.url ?? process.env.BATON_URL ?? 'http://127.0.0.1:7070').replace(/\/+$/, '');
  return { url, token: options.token ?? process.env.BATON_TOKEN };
}

export async function request(to: Server, method: string, path: string, init: { body?: Buffer | string; headers?: Record<string, string> } = {}): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(`${to.url}${path}`, {
      method,
      headers: { ...(to.token ? { authorization: `Bearer ${to.token}` } : {}), ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
  } catch (error) {
    throw new CliError(`Baton at ${to.url} could not be reached (${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}); check --url or BATON_URL.`, EXIT.unreachable);
  }
  if (response.ok) return response;
  let detail = `${response.status}`;
  try {
    const problem = (await response.json()) as { code?: string; detail?: string; errors?: { field: string; message: string }[] };
    detail = `${problem.code ?? response.status}: ${problem.detail ?? ''}${problem.errors ? ` (${problem.errors.map((e) => `${e.field}: ${e.message}`).join('; ')})` : ''}`;
  } catch {
    // Not a problem document: the status says enough.
  }
  const code = response.status === 401 || response.status === 403 ? EXIT.refused : EXIT.problem;
  throw new CliError(`${method} ${path} was refused: ${detail}`, code);
}

export async function json<T>(to: Server, method: string, path: string, init: { body?: Buffer | string; headers?: Record<string, string> } = {}): Promise<T> {
  return (await (await request(to, method, path, init)).json()) as T;
}
