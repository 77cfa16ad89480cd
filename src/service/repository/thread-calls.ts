/**
 * Calls to one worker thread, answered by id: the compression thread
 * (`compression-worker.ts`) and the indexer's merge thread
 * (`indexer/merge-thread.ts`) both keep one. The thread starts on the first
 * call and keeps the process alive only while a call waits. If it fails (it
 * cannot start, it exits, it throws), every call waiting on it is refused,
 * and it is not started again: the callers do the work on their own thread.
 *
 * A call posts `{ ...message, id }`; the thread answers `{ id, ... }`, or
 * `{ id, error }` for a call it could not do (the thread itself goes on).
 *
 * @module
 */
import type { TransferListItem, Worker } from 'node:worker_threads';

export interface ThreadAnswer {
  id: number;
  error?: string;
}

export class ThreadCalls<Answer extends ThreadAnswer> {
  private worker: Worker | undefined;
  private failed = false;
  private next = 0;
  private readonly waiting = new Map<number, { resolve(answer: Answer): void; reject(error: Error): void }>();

  /** `name`: what the thread is, in errors ("the compression thread"); `create` starts it. */
  constructor(
    private readonly name: string,
    private readonly create: () => Worker,
  ) {}

  /** Whether calls can still be made (false once the thread failed). */
  get usable(): boolean {
    return !this.failed;
  }

  /** Whether the thread is running now (a call would not start it). */
  get running(): boolean {
    return this.worker !== undefined;
  }

  /** How many calls wait for their answer. */
  get pending(): number {
    return this.waiting.size;
  }

  /** The thread's answer to `message`; refused if the thread fails meanwhile or answers an error. */
  call(message: object, transfer: readonly TransferListItem[] = []): Promise<Answer> {
    const worker = this.start();
    if (worker === undefined) return Promise.reject(new Error(`${capitalized(this.name)} is not available.`));
    const id = this.next++;
    return new Promise<Answer>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      if (this.waiting.size === 1) worker.ref();
      worker.postMessage({ ...message, id }, [...transfer]);
    });
  }

  /** Stops the thread; calls waiting are refused. `restartable`: a later call starts a new one. */
  async close(restartable = false): Promise<void> {
    const worker = this.worker;
    this.fail(new Error(`${capitalized(this.name)} was stopped.`));
    if (restartable) this.failed = false;
    await worker?.terminate();
  }

  private start(): Worker | undefined {
    if (this.failed) return undefined;
    if (this.worker !== undefined) return this.worker;
    try {
      const worker = this.create();
      worker.unref();
      worker.on('message', (answer: Answer) => this.answer(answer));
      worker.on('error', (error) => this.fail(error));
      worker.on('exit', () => this.fail(new Error(`${capitalized(this.name)} exited.`)));
      this.worker = worker;
      return worker;
    } catch (error) {
      this.fail(error instanceof Error ? error : new Error(String(error)));
      return undefined;
    }
  }

  private answer(answer: Answer): void {
    const waiting = this.waiting.get(answer.id);
    if (waiting === undefined) return;
    this.waiting.delete(answer.id);
    // Idle, the thread must not keep the process alive.
    if (this.waiting.size === 0) this.worker?.unref();
    if (answer.error !== undefined) waiting.reject(new Error(`${capitalized(this.name)} failed: ${answer.error}`));
    else waiting.resolve(answer);
  }

  private fail(error: Error): void {
    this.failed = true;
    this.worker = undefined;
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const { reject } of waiting) reject(error);
  }
}

function capitalized(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
