/**
 * The soak's live event subscribers (`loadtest/soak.ts`): each holds
 * `GET /v1/events` as a server-sent event stream for 15 to 45 seconds,
 * drops it, and connects again from the last event id it saw
 * (`Last-Event-ID`), as a dashboard or an orchestrator behind a flaky
 * network does. One in twenty takes every event (a dashboard); the others
 * take the events an orchestrator acts on (`ORCHESTRATOR_TYPES`). Counts
 * events, reconnections and failed connections.
 *
 * @module
 */
import http from 'node:http';
import { authHeaders } from './http-client.js';

/** What an orchestrator waits for: handoffs, their acknowledgments, finished work, lost agents. */
const ORCHESTRATOR_TYPES = 'AGENT_HANDOFF,HANDOFF_ACKNOWLEDGED,CHECKPOINT_FINALIZED,LEASE_EXPIRED,TASK_BLOCKED,RECOVERY_INITIATED';

export interface SseFigures {
  events: number;
  reconnects: number;
  failures: number;
  open: number;
}

export class Subscribers {
  private readonly figures: SseFigures = { events: 0, reconnects: 0, failures: 0, open: 0 };
  private stopped = false;
  private readonly requests = new Set<http.ClientRequest>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

  constructor(
    private readonly base: string,
    private readonly count: number,
  ) {}

  start(): void {
    // Spread the first connections over a second, as clients that come up one by one.
    for (let i = 0; i < this.count; i++) this.later(() => this.connect(undefined, i % 20 === 0 ? '' : `?types=${ORCHESTRATOR_TYPES}`), Math.random() * 1_000);
  }

  /** The figures so far; `reset` starts the next interval's counts at zero (open stays). */
  take(reset = true): SseFigures {
    const copy = { ...this.figures };
    if (reset) Object.assign(this.figures, { events: 0, reconnects: 0, failures: 0 });
    return copy;
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    for (const req of this.requests) req.destroy();
    this.agent.destroy();
  }

  private later(work: () => void, ms: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.stopped) work();
    }, ms);
    this.timers.add(timer);
  }

  private connect(lastEventId: string | undefined, query: string): void {
    let last = lastEventId;
    let counted = false;
    const url = new URL(`/v1/events${query}`, this.base);
    const req = http.get(url, { agent: this.agent, headers: { ...authHeaders, accept: 'text/event-stream', ...(last !== undefined ? { 'last-event-id': last } : {}) } }, (res) => {
      if (res.statusCode !== 200) {
        this.figures.failures++;
        res.resume();
        return;
      }
      counted = true;
      this.figures.open++;
      let partial = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop()!;
        for (const line of lines) {
          if (line.startsWith('id:')) {
            last = line.slice(3).trim();
            this.figures.events++;
          }
        }
      });
    });
    this.requests.add(req);
    const again = (): void => {
      if (counted) this.figures.open--;
      counted = false;
      this.requests.delete(req);
      if (this.stopped) return;
      this.figures.reconnects++;
      this.later(() => this.connect(last, query), 50 + Math.random() * 200);
    };
    req.on('error', () => {
      if (!this.stopped && !req.destroyed) this.figures.failures++;
    });
    req.on('close', again);
    // Hold the stream 15 to 45 s, then drop it.
    this.later(() => req.destroy(), 15_000 + Math.random() * 30_000);
  }
}
