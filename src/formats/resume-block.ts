/**
 * The pipeline's `CHECKPOINT RESUME` block: the text a lead appends to a new
 * worker's prompt after a crash. Export only; it is written from the same
 * pipeline document as the `pipeline` format, so the two always agree.
 *
 * @module
 */
import type { Checkpoint } from '../domain/checkpoint.js';
import type { Format } from './format.js';
import { pipelineDocument } from './pipeline.js';

export const resumeBlock: Format = {
  name: 'resume-block',
  mediaType: 'text/plain',
  render,
};

function render(checkpoint: Checkpoint): string {
  const doc = pipelineDocument(checkpoint);
  const list = (value: unknown) => (Array.isArray(value) ? value.join(', ') : '');
  const lines = [
    'CHECKPOINT RESUME — DO NOT re-execute completed work.',
    `Tasks already completed: ${list(doc.tasksCompleted)}`,
    `Tasks remaining: ${list(doc.tasksRemaining)}`,
    `Last action: ${typeof doc.lastAction === 'string' ? doc.lastAction : ''}`,
    'Continue from remaining tasks only.',
  ];
  return `${lines.map((line) => line.trimEnd()).join('\n')}\n`;
}
