/**
 * Wakes live event streams after a commit that wrote events. Streams also
 * poll, so events written by another instance (over FoundationDB) arrive too.
 *
 * @module
 */
import { EventEmitter } from 'node:events';

export class EventNotifier {
  private readonly emitter = new EventEmitter();

  constructor() {
    // Every open stream listens; there is no fixed bound on them.
    this.emitter.setMaxListeners(0);
  }

  notify(tenant: string): void {
    this.emitter.emit('events', tenant);
  }

  subscribe(listener: (tenant: string) => void): () => void {
    this.emitter.on('events', listener);
    return () => this.emitter.off('events', listener);
  }
}
