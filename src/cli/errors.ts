/**
 * How the `baton` command ends: its exit codes (`docs/cli.md`) and the one
 * error that carries them, printed as one sentence on stderr.
 *
 * @module
 */

export const EXIT = {
  ok: 0,
  /** The check ran and found a fault: a broken audit chain. */
  failed: 1,
  /** The command line is wrong. */
  usage: 2,
  /** The server could not be reached, or the data directory opened. */
  unreachable: 3,
  /** The token was refused (401) or its role may not (403). */
  refused: 4,
  /** The server answered the request with another problem. */
  problem: 5,
} as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
