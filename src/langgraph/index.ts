/**
 * `baton/langgraph`: a LangGraph.js checkpointer backed by Baton. See
 * docs/langgraph.md.
 *
 * @module
 */
export { BatonSaver, type BatonSaverOptions } from './baton-saver.js';
