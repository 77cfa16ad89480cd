/**
 * `baton/openai-agents`: the OpenAI Agents SDK's session and run state kept
 * in Baton. See docs/openai-agents.md.
 *
 * @module
 */
export { BatonSession, type BatonSessionOptions, type Logger } from './session.js';
export { CorruptedError } from './record.js';
export { loadRunState, saveRunState, type LoadRunStateOptions, type RootAgent, type SavableRunState, type SaveRunStateOptions } from './run-state.js';
