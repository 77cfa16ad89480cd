/**
 * A small LangGraph.js graph for the example: draft a release note, stop for
 * a person to approve it (`interrupt`), then publish or revise. Any
 * checkpointer runs it; run.ts gives it Baton's.
 */
import { Annotation, END, START, StateGraph, interrupt, type BaseCheckpointSaver } from '@langchain/langgraph';

const State = Annotation.Root({
  topic: Annotation<string>(),
  draft: Annotation<string>(),
  decision: Annotation<string>(),
  /** Every step appends a line, so the history shows what each checkpoint added. */
  log: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

/** The graph before it is compiled, so a server can compile it and give it its own checkpointer. */
export function releaseNoteWorkflow() {
  return new StateGraph(State)
    .addNode('write', (state) => ({ draft: `Release note: ${state.topic}.`, log: ['drafted'] }))
    .addNode('review', (state) => {
      // The run stops here and its state waits in the checkpointer until a person answers, in this process or another.
      const answer = interrupt({ question: 'Publish this note?', draft: state.draft }) as string;
      return { decision: answer, log: [`reviewed: ${answer}`] };
    })
    .addNode('publish', () => ({ log: ['published'] }))
    .addEdge(START, 'write')
    .addEdge('write', 'review')
    .addConditionalEdges('review', (state) => (state.decision === 'approve' ? 'publish' : END))
    .addEdge('publish', END);
}

export function releaseNoteGraph(checkpointer: BaseCheckpointSaver) {
  return releaseNoteWorkflow().compile({ checkpointer });
}
