/**
 * `baton/langgraph-api`: a LangGraph API server (the embed server of
 * `@langchain/langgraph-api`) over Baton. See docs/langgraph-api.md.
 *
 * @module
 */
export { createLangGraphApi, serveLangGraphApi, type LangGraphApi, type LangGraphApiOptions, type ServeOptions, type ServedLangGraphApi } from './server.js';
export { BatonThreadSaver, type BatonThread, type BatonThreadSaverOptions } from './thread-saver.js';
