import { afterAll, beforeAll, describe, it } from 'vitest';
import type { StoreInitializer } from './initializer.js';
import { atomicitySpec } from './atomicity.js';
import { boundedReadsSpec } from './bounded-reads.js';
import { commitOutcomeSpec } from './commit-outcome.js';
import { durabilitySpec } from './durability.js';
import { isolationSpec } from './isolation.js';
import { keyspaceSpec } from './keyspace.js';
import { limitsSpec } from './limits.js';
import { onceSpec } from './once.js';
import { rangeSpec } from './ranges.js';
import { readOnlySpec } from './read-only.js';
import { readWriteSpec } from './read-write.js';
import { serializabilitySpec } from './serializability.js';
import { snapshotReadsSpec } from './snapshot-reads.js';
import { stampSpec } from './stamps.js';
import { watchSpec } from './watches.js';

/** The specs every store must pass, in the order they are reported. */
const SPECS = [
  readWriteSpec,
  atomicitySpec,
  serializabilitySpec,
  isolationSpec,
  readOnlySpec,
  rangeSpec,
  snapshotReadsSpec,
  keyspaceSpec,
  stampSpec,
  onceSpec,
  commitOutcomeSpec,
  limitsSpec,
  boundedReadsSpec,
  durabilitySpec,
  watchSpec,
];

/** Registers the conformance suite for one store. */
export function runConformance(init: StoreInitializer): void {
  if (init.skipReason !== undefined) {
    describe(`store conformance: ${init.name}`, () => {
      // A visible line in the report, so a skipped backend is never mistaken for a passing one.
      it.skip(`${init.skipReason}`, () => undefined);
    });
    console.log(`[store conformance: ${init.name}] ${init.skipReason}`);
    return;
  }
  describe(`store conformance: ${init.name}`, () => {
    beforeAll(async () => init.beforeAll?.());
    afterAll(async () => init.afterAll?.());
    for (const spec of SPECS) spec(init);
  });
}
