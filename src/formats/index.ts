/**
 * The interchange formats Baton reads and writes (DESIGN §3), by name. The
 * HTTP layer picks a converter here for `POST /v1/import?format=` and
 * `GET /v1/checkpoints/:id/export?format=`; a converter never touches the
 * store. `docs/formats.md` maps each format's fields onto the checkpoint.
 *
 * @module
 */
import { builderState } from './builder-state.js';
import type { Format, FormatName, ImportFormat, ImportFormatName } from './format.js';
import { markdown } from './markdown/index.js';
import { pipeline } from './pipeline.js';
import { resumeBlock } from './resume-block.js';
import { workflowXml } from './workflow-xml/index.js';

export const FORMATS: Readonly<Record<ImportFormatName, ImportFormat> & Record<'resume-block', Format>> = {
  'builder-state': builderState,
  pipeline,
  'workflow-xml': workflowXml,
  markdown,
  'resume-block': resumeBlock,
};

export function isFormatName(name: string): name is FormatName {
  return Object.hasOwn(FORMATS, name);
}

export function isImportFormatName(name: string): name is ImportFormatName {
  return isFormatName(name) && FORMATS[name].parse !== undefined;
}

export { EXPORT_FORMAT_NAMES, IMPORT_FORMAT_NAMES } from './format.js';
export type { Format, FormatName, ImportFormat, ImportFormatName, MediaType, ParseOptions } from './format.js';
export { FormatError, type FormatErrorDetails } from './errors.js';
export { decodeUtf8 } from './utf8.js';
export { UNKNOWN_AGENT } from './input.js';
