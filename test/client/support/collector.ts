/** Iterates `client.events.stream` in the background, collecting what it yields, until stopped. */
import type { BatonClient, StoredEvent, StreamOptions } from '../../../src/client/index.js';
import { until } from './server.js';

export class Collector {
  readonly events: StoredEvent[] = [];
  error: unknown;
  readonly done: Promise<void>;
  private readonly abort = new AbortController();

  constructor(client: BatonClient, options: StreamOptions) {
    this.done = (async () => {
      try {
        for await (const event of client.events.stream({ ...options, signal: this.abort.signal })) this.events.push(event);
      } catch (error) {
        this.error = error;
      }
    })();
  }

  /** Resolves once `n` events arrived; fails at once if the stream failed. */
  has(n: number, what: string): Promise<void> {
    return this.until((events) => events.length >= n, `${n} events (${what})`);
  }

  /** Resolves once `ready` holds for the events so far. */
  until(ready: (events: StoredEvent[]) => boolean, what: string, timeoutMs?: number): Promise<void> {
    return until(
      () => {
        if (this.error) throw this.error;
        return ready(this.events);
      },
      `${what}; got ${this.events.length}: ${this.events.map((e) => e.type).join(', ')}`,
      timeoutMs,
    );
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}
