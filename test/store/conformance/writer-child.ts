/**
 * A child process for the durability spec: opens the store described by
 * BATON_TEST_STORE_CONFIG, writes keys (and a blind key beside each) from
 * several concurrent writers, and
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
      // A blind write (an index entry's kind) must be exactly as durable as the others of its transaction.
      tx.setBlind(Buffer.from(`blind/${String(n).padStart(8, '0')}`), Buffer.from(String(n)));
    });
    process.stdout.write(`${n}\n`);
  }
}

await Promise.all(Array.from({ length: writers }, writer));
