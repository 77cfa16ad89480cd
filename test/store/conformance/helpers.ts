import { afterEach, beforeEach } from 'vitest';
import type { StoreHooks } from '../../../src/store/store.js';
import type { StoreHandle, StoreInitializer } from './initializer.js';

/** A fresh store for each test of the enclosing `describe`, destroyed after it; `hooks` are opened with it. */
export function freshStore(init: StoreInitializer, hooks?: StoreHooks): () => StoreHandle {
  let handle: StoreHandle | undefined;
  beforeEach(async () => {
    handle = await init.create(hooks ? { hooks } : {});
  });
  afterEach(async () => {
    await handle?.destroy();
    handle = undefined;
  });
  return () => {
    if (handle === undefined) throw new Error('The store is only available inside a test.');
    return handle;
  };
}

export const b = (text: string): Buffer => Buffer.from(text, 'utf8');
export const text = (bytes: Buffer | undefined): string | undefined => bytes?.toString('utf8');
