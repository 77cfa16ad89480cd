/**
 * A long answer made of many pieces of JSON text (a page of stored
 * checkpoints) as one UTF-8 buffer, written piece by piece.
 *
 * Joined as a string, a page of 100 checkpoints (~250 KB) is a string past
 * V8's largest regular object (128 KB): it is made in the large-object
 * space, and then Fastify scans it once to count its bytes for
 * Content-Length and Node encodes it again into a buffer of its own for the
 * socket. Written straight into one buffer, each piece is encoded once and
 * the buffer goes to the socket as it is: 0.06 ms against 0.4–0.6 ms a
 * page of 100 (`docs/performance.md`, "Pages of checkpoints as bytes").
 * Shorter answers stay strings: their join is cheap, and a buffer's memory,
 * outside V8's heap, makes it mark sooner (single checkpoints as buffers
 * cost the open loop's reads more than they saved, twentieth stop).
 *
 * @module
 */

/** Answers whose pieces hold more characters than this are sent as bytes ({@link joinedText}). */
export const LARGE_ANSWER_CHARS = 64 * 1024;

/** `pieces` joined: a string when short, else their UTF-8 bytes in one buffer. */
export function joinedText(pieces: readonly string[]): string | Buffer {
  let chars = 0;
  let longest = 0;
  for (const piece of pieces) {
    chars += piece.length;
    if (piece.length > longest) longest = piece.length;
  }
  if (chars <= LARGE_ANSWER_CHARS) return pieces.join('');
  // A character is 1 to 3 bytes of UTF-8 (a surrogate pair, 2 characters, is 4): ASCII text fits as it is, and
  // room for the longest piece at 3 bytes a character means any one piece fits whole before the buffer must grow.
  let bytes = Buffer.allocUnsafe(chars + 3 * longest);
  let at = 0;
  for (const piece of pieces) {
    if (bytes.length - at < 3 * piece.length) {
      const larger = Buffer.allocUnsafe(Math.max(2 * bytes.length, at + 3 * piece.length));
      bytes.copy(larger, 0, 0, at);
      bytes = larger;
    }
    at += bytes.write(piece, at, 'utf8');
  }
  return bytes.subarray(0, at);
}
