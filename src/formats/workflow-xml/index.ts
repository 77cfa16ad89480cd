/**
 * The `workflow-xml` format: `<workflow_checkpoint>`, `<approval_checkpoint>`
 * and `<error_checkpoint>` documents. `docs/formats.md` has the field table.
 *
 * @module
 */
import type { ImportFormat } from '../format.js';
import { FORMAT, parseWorkflowXml } from './parse.js';
import { renderWorkflowXml } from './render.js';

export const workflowXml: ImportFormat = {
  name: FORMAT,
  mediaType: 'application/xml',
  parse: parseWorkflowXml,
  render: renderWorkflowXml,
};
