/**
 * Not a test file: `npm run typecheck` reads it. The client writes out the
 * answer shapes the server defines in `src/service` and `src/http/routes`
 * (which the client must not import); each line fails to compile when the
 * two drift apart.
 */
import type { LeaseView, LineagePage, ResumePrompt } from '../../src/client/index.js';
import type { leaseView } from '../../src/http/routes/leases.js';
import type { checkpointLineage } from '../../src/service/checkpoint-reads.js';
import type { ResumePrompt as ServerResumePrompt } from '../../src/service/resume-prompt.js';

/** True only when A and B are the same type (each assignable to the other, optional members alike). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** An intersection as one object type, so `Same` compares members, not how the type was written. */
type Flat<T> = { [K in keyof T]: T[K] };

// The views of src/domain/views.ts are shared, not copied; what is still written out twice is held equal here.
export const sameShapes: [
  Same<LineagePage, Awaited<ReturnType<typeof checkpointLineage>>>,
  Same<LeaseView, ReturnType<typeof leaseView>>,
  Same<ResumePrompt, Flat<ServerResumePrompt & { checkpointId: string; version: number }>>,
] = [true, true, true];
