/**
 * A POSIX ustar archive of small in-memory files, as `tar -xf` reads it: a
 * 512-byte header per file (name, mode, size, mtime, type, checksum), the
 * content padded to 512 bytes, two zero blocks at the end. Names are at most
 * 100 bytes, which the evidence bundle's paths always are.
 *
 * @module
 */

const BLOCK = 512;

export interface TarFile {
  path: string;
  data: Buffer;
}

function field(header: Buffer, offset: number, length: number, value: string): void {
  header.write(value, offset, length, 'ascii');
}

function octal(value: number, length: number): string {
  // length - 1 digits and a NUL, as ustar writes numbers.
  return `${value.toString(8).padStart(length - 1, '0')}\0`;
}

function header(file: TarFile, mtime: number): Buffer {
  const name = Buffer.from(file.path, 'utf8');
  if (name.length > 100) throw new RangeError(`A tar entry name is at most 100 bytes: ${file.path}`);
  const block = Buffer.alloc(BLOCK);
  name.copy(block, 0);
  field(block, 100, 8, octal(0o644, 8));
  field(block, 108, 8, octal(0, 8));
  field(block, 116, 8, octal(0, 8));
  field(block, 124, 12, octal(file.data.length, 12));
  field(block, 136, 12, octal(mtime, 12));
  // The checksum is computed with its own field as eight spaces.
  field(block, 148, 8, '        ');
  field(block, 156, 1, '0');
  field(block, 257, 6, 'ustar\0');
  field(block, 263, 2, '00');
  field(block, 265, 32, 'baton');
  field(block, 297, 32, 'baton');
  let sum = 0;
  for (const byte of block) sum += byte;
  field(block, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return block;
}

/** The archive of `files`, in order, each dated `mtime` (seconds since the epoch). */
export function tar(files: readonly TarFile[], mtime: number): Buffer {
  const parts: Buffer[] = [];
  for (const file of files) {
    parts.push(header(file, mtime), file.data);
    const pad = (BLOCK - (file.data.length % BLOCK)) % BLOCK;
    if (pad > 0) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}
