/**
 * Answers written as bytes from their pieces. A checkpoint's answer is its
 * stored text with the hash put in (`CheckpointDoc.jsonParts`); joined as a
 * string, that text was copied twice more before it left: flattened for
 * `Content-Length`, then joined to the head of the response and flattened
 * again for the socket (~8 KB of a read's 42 KB of garbage,
 * `docs/performance.md`). Written straight into one buffer, its characters
 * are copied once, outside the JavaScript heap for all but the buffer's
 * handle, and Node sends the head and the buffer in one `writev`.
 *
 * @module
 */

/** The UTF-8 bytes of `pieces` joined, with no joined string made. */
export function utf8Joined(pieces: readonly string[]): Buffer {
  let length = 0;
  for (const piece of pieces) length += Buffer.byteLength(piece, 'utf8');
  const bytes = Buffer.allocUnsafe(length);
  let at = 0;
  for (const piece of pieces) at += bytes.write(piece, at, 'utf8');
  return bytes;
}
