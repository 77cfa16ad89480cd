/**
 * Identifiers: UUIDv7, time-ordered, minted by the service before a
 * transaction starts (bodies may run twice; ids must not change).
 *
 * Ids minted by this process are strictly increasing: within one millisecond
 * the 32-bit counter of RFC 9562 §6.2 (method 1) goes up by one from a random
 * start, as `uuid`'s own v7 does. The random bits come from a pool refilled
 * 4 KiB at a time: one `getRandomValues` call per id cost more than the rest
 * of minting it.
 *
 * @module
 */
import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

function random16(): Uint8Array {
  if (used + 16 > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const bytes = pool.subarray(used, used + 16);
  used += 16;
  return bytes;
}

/** The last id's millisecond and counter. */
const last = { msecs: -Infinity, seq: 0 };

export function newId(): string {
  const random = random16();
  const now = Date.now();
  if (now > last.msecs) {
    // A fresh millisecond starts the counter at a random 31-bit value, leaving room to count up.
    last.msecs = now;
    last.seq = (((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!) >>> 0;
  } else {
    last.seq = (last.seq + 1) | 0;
    // The counter wrapped: borrow the next millisecond, as RFC 9562 allows.
    if (last.seq === 0) last.msecs += 1;
  }
  return v7({ random, msecs: last.msecs, seq: last.seq });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
