/**
 * The sections of a markdown checkpoint, in the format's order, and which of
 * them hold a checkpoint field. Sections are matched by name, ignoring case,
 * spaces and punctuation, so `Play-by-play` is `Play-By-Play`.
 *
 * @module
 */

export type SectionField = 'keyDecisions' | 'completedItems' | 'filesModified' | 'currentFocus' | 'pendingItems' | 'constraints';

export interface SectionSpec {
  title: string;
  level: 2 | 3;
  field?: SectionField;
}

export const LAYOUT: readonly SectionSpec[] = [
  { title: 'Problem', level: 2 },
  { title: 'Session Intent', level: 2 },
  { title: 'Essential Information', level: 2 },
  { title: 'Decisions', level: 3, field: 'keyDecisions' },
  { title: 'Technical Context', level: 3 },
  { title: 'Breadcrumbs', level: 3 },
  { title: 'Play-By-Play', level: 3, field: 'completedItems' },
  { title: 'Artifact Trail', level: 3, field: 'filesModified' },
  { title: 'Current State', level: 3, field: 'currentFocus' },
  { title: 'Next Actions', level: 3, field: 'pendingItems' },
  { title: 'User Rules', level: 2, field: 'constraints' },
  { title: 'Completion', level: 2 },
];

export function titleKey(title: string): string {
  return [...title.toLowerCase()].filter((ch) => (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch === ':').join('');
}

const BY_KEY = new Map(LAYOUT.map((spec, index) => [titleKey(spec.title), { spec, index }]));

export const LEVEL_THREE_TITLES = new Set(LAYOUT.filter((spec) => spec.level === 3).map((spec) => titleKey(spec.title)));

/** The known section named `title` and its place in the layout. */
export function sectionNamed(title: string): { spec: SectionSpec; index: number } | undefined {
  return BY_KEY.get(titleKey(title));
}

export function isDelta(title: string): boolean {
  return titleKey(title).startsWith('delta:');
}
