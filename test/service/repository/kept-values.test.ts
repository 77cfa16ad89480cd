/**
 * The bounded map behind the caches of decoded records and open runs
 * (`kept-values.ts`): whatever is kept is the value last set under its key,
 * the weight kept stays within the bound, and a value heavier than the bound
 * is not kept.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeptValues } from '../../../src/service/repository/kept-values.js';

describe('KeptValues', () => {
  it('keeps only values last set under their key, within its bound', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), id: fc.integer({ min: 0, max: 30 }), weight: fc.integer({ min: 1, max: 40 }) }),
      fc.record({ kind: fc.constant('delete' as const), id: fc.integer({ min: 0, max: 30 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), fc.array(op, { maxLength: 200 }), (capacity, ops) => {
        const kept = new KeptValues<{ n: number; weight: number }>(capacity);
        const last = new Map<number, { n: number; weight: number }>();
        ops.forEach((step, n) => {
          if (step.kind === 'set') {
            const value = { n, weight: step.weight };
            kept.set(String(step.id), value, step.weight);
            last.set(step.id, value);
            // The newest value is kept whenever it fits the bound alone.
            expect(kept.get(String(step.id))).toBe(step.weight <= capacity ? value : undefined);
          } else {
            kept.delete(String(step.id));
            last.delete(step.id);
            expect(kept.get(String(step.id))).toBeUndefined();
          }
          let weight = 0;
          let count = 0;
          for (let id = 0; id <= 30; id++) {
            const value = kept.get(String(id));
            if (value === undefined) continue;
            expect(value).toBe(last.get(id));
            weight += value.weight;
            count += 1;
          }
          expect(weight).toBeLessThanOrEqual(capacity);
          expect(kept.count).toBe(count);
        });
      }),
      { numRuns: 300 },
    );
  });
});
