/**
 * Not a test file: `npm run typecheck` reads it. The client writes out the
 * answer shapes the server defines in `src/service` and `src/http/routes`
 * (which the client must not import); each line fails to compile when the
 * two drift apart.
 */
import type { LeaseView, Lineage, LineageNode, RevisionInfo, TaskInfo } from '../../src/client/index.js';
import type { leaseView } from '../../src/http/routes/leases.js';
import type { checkpointLineage, LineageNode as ServerLineageNode, RevisionInfo as ServerRevisionInfo } from '../../src/service/checkpoint-reads.js';
import type { TaskInfo as ServerTaskInfo } from '../../src/service/tasks.js';

/** True only when A and B are the same type (each assignable to the other, optional members alike). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

export const sameShapes: [
  Same<TaskInfo, ServerTaskInfo>,
  Same<LineageNode, ServerLineageNode>,
  Same<Lineage, Awaited<ReturnType<typeof checkpointLineage>>>,
  Same<RevisionInfo, ServerRevisionInfo>,
  Same<LeaseView, ReturnType<typeof leaseView>>,
] = [true, true, true, true, true];
