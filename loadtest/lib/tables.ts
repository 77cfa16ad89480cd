/**
 * Plain-text tables for the benchmarks' console output: columns padded to
 * their widest cell, text columns on the left aligned left, figures aligned
 * right, so that runs can be compared by eye and diffed.
 *
 * @module
 */

/**
 * A header row, a row of dashes and the body, columns two spaces apart. The
 * first `leftColumns` columns are aligned left, the rest right. Trailing
 * spaces (empty cells at the end of a row) are dropped.
 */
export function alignedTable(head: string[], body: string[][], leftColumns: number): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n').replace(/ +$/gm, '');
}

/** `value` with `digits` decimals, or '-' when it is not a finite number (a ratio over zero, no samples). */
export const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : '-');
