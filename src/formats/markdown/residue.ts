/**
 * What `extensions.markdown` holds: the document's layout and every part
 * without a checkpoint field (front matter, Problem, Session Intent, deltas,
 * unknown sections) as written, with the mapped sections reduced to where
 * their field's text goes back.
 *
 * @module
 */
import { z } from 'zod';

const FIELDS = ['keyDecisions', 'completedItems', 'filesModified', 'currentFocus', 'pendingItems', 'constraints'] as const;

export const storedSection = z.union([
  /** A section kept as written: its heading line and everything up to the next section. */
  z.object({ heading: z.string(), text: z.string() }),
  /** A section whose content is a checkpoint field; `lead` and `trail` are the blank lines (and separator) around it. */
  z.object({
    heading: z.string(),
    field: z.enum(FIELDS),
    lead: z.string(),
    trail: z.string(),
    /** The content was prose rather than a list; it is the field's one entry and is written back as prose. */
    form: z.literal('prose').optional(),
    /** The head of the Artifact Trail table, when it differs from the format's. */
    head: z.string().optional(),
    /** Content the field could not hold (a table in another layout), written back while the field is unset. */
    raw: z.string().optional(),
  }),
]);
export type StoredSection = z.infer<typeof storedSection>;

export const markdownResidue = z.object({
  /** The YAML between the --- lines, exactly as written. */
  frontMatter: z.string().optional(),
  /** Text before the first section. */
  preamble: z.string(),
  sections: z.array(storedSection),
  /** The document used CRLF line ends. */
  crlf: z.literal(true).optional(),
  /** The document did not end with a newline. */
  finalNewline: z.literal(false).optional(),
});
export type MarkdownResidue = z.infer<typeof markdownResidue>;
