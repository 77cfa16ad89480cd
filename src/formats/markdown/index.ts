/**
 * The `markdown` format: a checkpoint file with YAML front matter, the
 * format's sections and inline `## Delta:` sections. `docs/formats.md` has
 * the section table.
 *
 * @module
 */
import type { ImportFormat } from '../format.js';
import { FORMAT, parseMarkdown } from './parse.js';
import { renderMarkdown } from './render.js';

export const markdown: ImportFormat = {
  name: FORMAT,
  mediaType: 'text/markdown',
  parse: parseMarkdown,
  render: renderMarkdown,
};
