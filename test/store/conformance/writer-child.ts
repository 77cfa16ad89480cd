/**
 * A child process for the durability spec: opens the store described by
 * BATON_TEST_STORE_CONFIG, writes keys from several concurrent writers, and
 * prints each key's number once its transaction has resolved. The parent
 * kills it with SIGKILL mid-stream.
 */
import { openStore, type StoreConfig } from '../../../src/store/open.js';

const config = JSON.parse(process.env.BATON_TEST_STORE_CONFIG ?? '{}') as StoreConfig;
const store = await openStore(config);
const writers = 8;
let next = 0;

async function writer(): Promise<void> {
  for (;;) {
    const n = next++;
    const key = Buffer.from(`ack/${String(n).padStart(8, '0')}`);
    await store.transact(async (tx) => {
      tx.set(key, Buffer.alloc(2048, n % 251));
    });
    process.stdout.write(`${n}\n`);
  }
}

await Promise.all(Array.from({ length: writers }, writer));
