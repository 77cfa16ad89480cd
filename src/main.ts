/**
 * The service's entry point (`npm start`): runs the server until it is told
 * to stop (`server.ts`).
 *
 * @module
 */
import { serveOrExit } from './server.js';

serveOrExit();
