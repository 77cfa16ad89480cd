/**
 * The one timer loop of the background work (the lease and operation
 * sweepers, the maintenance runner): `work` every `intervalMs`, never two at
 * once (a run slower than the interval is not stacked on: the next tick finds
 * it running and passes), a failure logged once until a run succeeds again
 * (not once a second through an outage), the timer never keeping the process
 * alive, and `stop()` letting the run in progress finish.
 *
 * @module
 */
import type { ServiceLogger } from '../context.js';

export interface Periodic {
  /** Stops the timer and waits for the run in progress. */
  stop(): Promise<void>;
  /** Runs now (or waits for the run in progress). */
  kick(): Promise<void>;
  /** True once `stop` was called: a long run checks it between its steps. */
  readonly stopped: boolean;
}

export function periodic(name: string, intervalMs: number, log: ServiceLogger, work: (state: { readonly stopped: boolean }) => Promise<void>): Periodic {
  let running: Promise<void> | undefined;
  let failing = false;
  const state = { stopped: false };
  const run = (): Promise<void> => {
    running ??= work(state)
      .then(() => {
        failing = false;
      })
      .catch((error: unknown) => {
        if (!failing) log.warn({ err: error, work: name }, 'background work failed; retrying at each tick until it succeeds');
        failing = true;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const timer = setInterval(() => void run(), intervalMs);
  timer.unref();
  return {
    async stop() {
      state.stopped = true;
      clearInterval(timer);
      await running;
    },
    kick: run,
    get stopped() {
      return state.stopped;
    },
  };
}
