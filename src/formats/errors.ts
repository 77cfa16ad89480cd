/**
 * The one error a format converter throws for a document it cannot read:
 * where the fault is (line and column, or the field / element path) and what
 * was expected there. The message is a static sentence; the variables are
 * fields, so the HTTP layer can list them as `errors: [{ field, message }]`.
 *
 * @module
 */
import type { FieldError } from '../errors.js';

export interface FormatErrorDetails {
  /** The format being read, e.g. `pipeline`, or `utf-8` while decoding bytes. */
  format: string;
  /** Path of the offending field or element, e.g. `completedSteps[1].timestamp`. */
  field?: string;
  /** 1-based line of the fault, when the parser knows it. */
  line?: number;
  /** 1-based column of the fault, when the parser knows it. */
  column?: number;
  /** What the converter expected to find there, as a phrase. */
  expected: string;
}

export class FormatError extends Error {
  static readonly MESSAGE = 'The document cannot be read in the format named; correct it where the error points and send it again.';

  readonly format: string;
  readonly field: string | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;
  readonly expected: string;

  constructor(details: FormatErrorDetails, options?: { cause?: unknown }) {
    super(FormatError.MESSAGE, options);
    this.name = 'FormatError';
    this.format = details.format;
    this.field = details.field;
    this.line = details.line;
    this.column = details.column;
    this.expected = details.expected;
  }

  /** Where the fault is, as one string: `line 3, column 7`, a field path, or both. */
  get location(): string {
    const position = this.line === undefined ? undefined : this.column === undefined ? `line ${this.line}` : `line ${this.line}, column ${this.column}`;
    if (position !== undefined && this.field !== undefined) return `${position} (${this.field})`;
    return position ?? this.field ?? 'document';
  }

  /** The entry the HTTP layer lists in a `validation_failed` problem. */
  toFieldError(): FieldError {
    return { field: this.location, message: `expected ${this.expected}` };
  }
}

/** The 1-based line and column of a character offset in `text`. */
export function positionOf(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(Math.max(offset, 0), text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line += 1;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/** Refuses a document longer than `max` characters before any parser sees it. */
export function checkSize(format: string, text: string, max: number): void {
  if (text.length > max) throw new FormatError({ format, field: 'document', expected: `a document of at most ${max} characters` });
}
