/**
 * Fuzzing at parse level: the seed examples cut, spliced and sprinkled with
 * markup, and raw bytes through strict decoding. Whatever comes in, parse
 * either yields an input the service accepts (which renders again) or throws
 * a FormatError; no other exception escapes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeUtf8, FORMATS, FormatError, type ImportFormatName } from '../../src/formats/index.js';
import { assertValidInput, fixture, materialize } from './support.js';

const SEEDS: Record<ImportFormatName, string[]> = {
  'builder-state': [fixture('seed-000-builder-state.json')],
  pipeline: [fixture('seed-002-pipeline-stage3.json')],
  'workflow-xml': [fixture('seed-003-workflow-corrected.xml'), fixture('seed-003-approval.xml'), fixture('seed-003-error.xml')],
  markdown: [fixture('seed-004-structure.md'), `${fixture('seed-004-structure.md')}\n${fixture('seed-004-delta.md')}`],
};

const fragment = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom('{', '}', '[', ']', '"', ',', ':', 'null', '<', '>', '</', '/>', '&', '&amp;', '&#0;', '<![CDATA[', ']]>', '<!--', '-->', '<!DOCTYPE x>', '\n---\n', '\n## ', '\n### Decisions\n', '```', '\uFEFF', '\u0000', '\uD800'),
);

/** A seed with one of: a cut, a deleted span, an inserted fragment, or a duplicated span. */
function mutated(seeds: string[]): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(...seeds), fc.nat(), fc.nat(), fragment, fc.constantFrom('cut', 'delete', 'insert', 'duplicate'))
    .map(([seed, a, b, insert, kind]) => {
      const i = a % (seed.length + 1);
      const j = Math.min(seed.length, i + (b % 40));
      if (kind === 'cut') return seed.slice(0, i);
      if (kind === 'delete') return seed.slice(0, i) + seed.slice(j);
      if (kind === 'insert') return seed.slice(0, i) + insert + seed.slice(i);
      return seed.slice(0, j) + seed.slice(i, j) + seed.slice(j);
    });
}

function parsesOrRefuses(format: ImportFormatName, text: string): void {
  let input;
  try {
    input = FORMATS[format].parse(text, { taskId: 'fuzz-task' });
  } catch (error) {
    if (!(error instanceof FormatError)) throw error;
    expect(error.toFieldError().message).toMatch(/^expected /);
    return;
  }
  assertValidInput(input);
  expect(typeof FORMATS[format].render(materialize(input))).toBe('string');
}

describe('mutated documents are parsed or refused with a FormatError', () => {
  for (const format of Object.keys(SEEDS) as ImportFormatName[]) {
    it(format, () => {
      fc.assert(
        fc.property(mutated(SEEDS[format]), (text) => parsesOrRefuses(format, text)),
        { numRuns: 400 },
      );
    });
  }

  it('raw bytes: strict UTF-8 decoding, then every format', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        let text: string;
        try {
          text = decodeUtf8(bytes);
        } catch (error) {
          expect(error).toBeInstanceOf(FormatError);
          return;
        }
        for (const format of Object.keys(SEEDS) as ImportFormatName[]) parsesOrRefuses(format, text);
      }),
      { numRuns: 300 },
    );
  });
});
