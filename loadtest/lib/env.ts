/**
 * Reading the benchmarks' environment knobs: numbers (BENCH_SECONDS and the
 * like; one that is set but not a positive number stops the run: a typo
 * must not silently measure something else), and node flags for a server.
 *
 * @module
 */

/** `process.env[name]` as a positive number (an integer if `integer`), or `fallback` when unset or empty. */
export function envNumber(name: string, fallback: number, integer: boolean): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'}, not "${raw}".`);
  }
  return value;
}

/** Node flags from `process.env[name]`, split on spaces (none when unset): added to a server's after the start script's. */
export function nodeFlags(name: string): string[] {
  return (process.env[name] ?? '').split(' ').filter(Boolean);
}
