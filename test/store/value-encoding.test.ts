/**
 * Stored values are MessagePack. The bytes below were written by the encoder
 * earlier releases used (@msgpack/msgpack 3.1, `ignoreUndefined`): a store
 * written then must read the same now, and the values Baton writes most (a
 * record, a head of small numbers, a list of words) must still be written
 * as the same bytes, which the compression dictionary and the sealed
 * values' sizes were measured on.
 */
import { describe, expect, it } from 'vitest';
import { decodeValue, encodeValue } from '../../src/store/keyspace.js';

const EARLIER = {
  record: '82a163d9297b227461736b4964223a22742d31222c226e6f7465223a2268c3a96c6c6f20e29c9320f09d849e227da168d940' + '6162'.repeat(32),
  head: '8ba373657111a565706f636803a57374617465a6616374697665a46c617374c0a966696e616c697a6564c2a5726174696fcb3fdae147ae147ae1a36e6567fba3626967cf0000010000000000a66e6567426967d3ffffff0000000000a46c6973749401a374776f910380a5656d707479a0',
  bytes: '81a26976c405000102feff',
  text: 'da0118' + '776f726420300a'.repeat(40),
};

const record = { c: '{"taskId":"t-1","note":"héllo ✓ 𝄞"}', h: 'ab'.repeat(32) };
const head = { seq: 17, epoch: 3, state: 'active', last: null, finalized: false, ratio: 0.42, neg: -5, big: 2 ** 40, negBig: -(2 ** 40), list: [1, 'two', [3], {}], empty: '' };

describe('stored values', () => {
  it('reads the values earlier releases wrote, 64-bit integers as numbers', () => {
    expect(decodeValue(Buffer.from(EARLIER.record, 'hex'))).toEqual(record);
    expect(decodeValue(Buffer.from(EARLIER.head, 'hex'))).toEqual(head);
    expect(decodeValue(Buffer.from(EARLIER.text, 'hex'))).toBe('word 0\n'.repeat(40));
    const { iv } = decodeValue<{ iv: Uint8Array }>(Buffer.from(EARLIER.bytes, 'hex'));
    expect([...iv]).toEqual([0, 1, 2, 254, 255]);
  });

  it('writes records, heads and word lists as the same bytes as before, leaving out keys whose value is undefined', () => {
    expect(Buffer.from(encodeValue(record)).toString('hex')).toBe(EARLIER.record);
    expect(Buffer.from(encodeValue('word 0\n'.repeat(40))).toString('hex')).toBe(EARLIER.text);
    expect(Buffer.from(encodeValue({ iv: new Uint8Array([0, 1, 2, 254, 255]) })).toString('hex')).toBe(EARLIER.bytes);
    const { big, negBig, ...small } = head;
    const written = decodeValue<Record<string, unknown>>(encodeValue({ ...small, gone: undefined }));
    expect(written).toEqual(small);
    expect('gone' in written).toBe(false);
    expect(decodeValue(encodeValue({ big, negBig }))).toEqual({ big, negBig });
  });

  it('reads binary as a copy, not a view of the buffer it was read from', () => {
    const stored = Buffer.from(EARLIER.bytes, 'hex');
    const { iv } = decodeValue<{ iv: Uint8Array }>(stored);
    stored.fill(0);
    expect([...iv]).toEqual([0, 1, 2, 254, 255]);
  });

  it('keeps what it wrote when it writes again', () => {
    const first = encodeValue(record);
    const copy = Buffer.from(first);
    for (let i = 0; i < 2000; i++) encodeValue({ i, text: 'x'.repeat(i % 300) });
    expect(Buffer.from(first).equals(copy)).toBe(true);
  });
});
