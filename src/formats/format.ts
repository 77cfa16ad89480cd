/**
 * What every format converter offers: its name, the media type of its
 * documents, `parse` (document → checkpoint input, for formats that can be
 * imported) and `render` (stored checkpoint → document).
 *
 * @module
 */
import type { Checkpoint, CheckpointInput } from '../domain/checkpoint.js';

export const IMPORT_FORMAT_NAMES = ['builder-state', 'pipeline', 'workflow-xml', 'markdown'] as const;
export const EXPORT_FORMAT_NAMES = [...IMPORT_FORMAT_NAMES, 'resume-block'] as const;

export type ImportFormatName = (typeof IMPORT_FORMAT_NAMES)[number];
export type FormatName = (typeof EXPORT_FORMAT_NAMES)[number];
export type MediaType = 'application/json' | 'application/xml' | 'text/markdown' | 'text/plain';

/** Facts the document may not carry itself, supplied by whoever imports it. */
export interface ParseOptions {
  /** The task the checkpoint belongs to; required unless the document names its task (a pipeline's storyId). */
  taskId?: string;
  /** The writing agent, used when the document names none; defaults to `unknown`. */
  agentId?: string;
}

export interface Format {
  readonly name: FormatName;
  readonly mediaType: MediaType;
  /** Reads a document; throws FormatError for anything it cannot read. The result passes `checkpointInput`. */
  parse?(text: string, options: ParseOptions): CheckpointInput;
  /** Writes a stored checkpoint as a document; never throws for a checkpoint that passed validation. */
  render(checkpoint: Checkpoint): string;
}

export interface ImportFormat extends Format {
  readonly name: ImportFormatName;
  parse(text: string, options: ParseOptions): CheckpointInput;
}
