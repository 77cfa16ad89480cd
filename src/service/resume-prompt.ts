/**
 * The resume prompt of a checkpoint (DESIGN §3, `GET
 * /v1/checkpoints/:id/resume-prompt`): markdown that lets a fresh agent carry
 * on without redoing finished work, fitted to a token budget counted with the
 * o200k_base tokenizer. Pure: it reads the checkpoint it is given and nothing
 * else.
 *
 * Fitting follows the markdown format's information priority. The problem,
 * the session intent, the decisions, the current state and the next actions
 * are never dropped. When the whole prompt is over budget, parts give way in
 * this order: older completed steps are summarised ("… and 14 earlier steps
 * done"), then the files to review (the artifact trail), the breadcrumbs, the
 * technical context, the remaining completed steps, the recovery notes, the
 * previous agent's continuation note (cut, then left out), the verification
 * criteria, the rules, and the long introduction and instructions. Then the
 * never-dropped parts are shortened: decisions lose their rationale, long
 * entries are cut, long lists keep their first (or, for decisions, latest)
 * entries. Below that, the prompt becomes one line per never-dropped part,
 * the current step and next action first, cut to the budget. The answer is
 * never empty and never over budget, down to a budget of one token; below
 * `PROMPT_FLOOR` tokens it is only the start of the current step's line.
 *
 * @module
 */
import type { Checkpoint } from '../domain/checkpoint.js';
import { factsOf, type Facts } from './resume-prompt/facts.js';
import { droppedBy, FULL, oneLineForm, renderBlocks, type Cut, type Plan } from './resume-prompt/render.js';
import { Cutter, cutToTokens, TokenCounter, tokenCount } from './resume-prompt/tokens.js';

export interface ResumePrompt {
  text: string;
  /** Tokens of `text` (o200k_base). */
  tokens: number;
  /** The budget asked for; null when the whole prompt was asked for. */
  budget: number | null;
  /** The parts summarised, shortened or left out to meet the budget, in the order they gave way. */
  dropped: string[];
}

/** The smallest budget that still gets the current step and the next action, each cut to a line. */
export const PROMPT_FLOOR = 20;
/** Budgets are whole tokens from 1 up to this. */
export const MAX_PROMPT_BUDGET = 1_000_000;
/** Completed steps kept one by one while the older ones are summarised. */
const RECENT_STEPS = 3;
/** A continuation note cut shorter than this says too little to keep. */
const MIN_NOTE_TOKENS = 16;
/** Tokens of the note's heading and the blank lines around it. */
const NOTE_OVERHEAD = 12;
/** Never-dropped entries are not cut shorter than this. */
const MIN_ENTRY_TOKENS = 8;

/** The resume prompt of `checkpoint`, whole, or fitted to `budget` tokens. */
export function resumePrompt(checkpoint: Checkpoint, budget?: number): ResumePrompt {
  const facts = factsOf(checkpoint);
  const counter = new TokenCounter();
  const cut = memoCut(counter);
  if (budget === undefined) {
    const text = renderBlocks(facts, FULL, cut).join('');
    return { text, tokens: tokenCount(text), budget: null, dropped: [] };
  }
  const max = Math.min(MAX_PROMPT_BUDGET, Math.max(1, Math.floor(budget)));
  const sizes = {
    note: facts.note === undefined ? 0 : counter.count(facts.note),
    entry: Math.max(0, ...mustEntries(facts).map((entry) => counter.count(entry))),
    list: Math.max(facts.problem.length, facts.intent.length, facts.decisions.length, facts.state.length, facts.next.length),
  };
  const over = (candidate: Plan) => counter.total(renderBlocks(facts, candidate, cut)) - max;
  const plan = choosePlan(facts, over, sizes.note, sizes.entry, sizes.list);
  if (plan !== undefined) {
    const text = renderBlocks(facts, plan, cut).join('');
    const tokens = tokenCount(text);
    // The sum of the blocks is the count of the text; the recount guards that promise.
    if (tokens <= max) return { text, tokens, budget: max, dropped: droppedBy(facts, plan, sizes.note, sizes.entry, sizes.list) };
  }
  const text = fitLines(oneLineForm(facts), max, counter, cut);
  const poorest = { ...FULL, completed: 0, files: 0, breadcrumbs: false, context: false, recovery: false, note: 0, verification: false, rules: false, brief: true, rationale: false, entryTokens: 0, listed: 0 };
  return { text, tokens: tokenCount(text), budget: max, dropped: [...droppedBy(facts, poorest, sizes.note, sizes.entry, sizes.list), 'one-line-form'] };
}

function mustEntries(f: Facts): string[] {
  return [f.taskId, ...f.problem, ...f.intent, ...f.decisions.flatMap((d) => [d.text, d.why ?? '']), ...f.state, f.focus ?? '', f.partial ?? '', ...f.next];
}

function memoCut(counter: TokenCounter): Cut {
  const cutter = new Cutter();
  const known = new Map<string, string>();
  return (text, tokens) => {
    if (counter.count(text) <= tokens) return text;
    const memoKey = `${tokens}:${text}`;
    let result = known.get(memoKey);
    if (result === undefined) {
      result = cutter.cut(text, tokens);
      known.set(memoKey, result);
    }
    return result;
  };
}

type Knob = 'completed' | 'files' | 'entryTokens' | 'listed';
/**
 * One step down the ladder: set some parts, search a knob for the largest
 * value that fits, or give the continuation note what the rest leaves.
 */
type Move = { set: Partial<Plan> } | { knob: Knob; low: number; high: number } | { note: 'rest' };

/** The richest plan that fits, walking down the ladder of the module comment; undefined when none does. */
function choosePlan(f: Facts, over: (plan: Plan) => number, noteTokens: number, longest: number, longestList: number): Plan | undefined {
  const fits = (candidate: Plan) => over(candidate) <= 0;
  let plan = FULL;
  if (fits(plan)) return plan;
  const n = f.completed.length;
  const recent = Math.min(RECENT_STEPS, n);
  const moves: Move[] = [
    { knob: 'completed', low: recent, high: n - 1 },
    { set: { completed: recent } },
    { knob: 'files', low: 1, high: f.files.length - 1 },
    { set: { files: 0 } },
    { set: { breadcrumbs: false } },
    { set: { context: false } },
    { knob: 'completed', low: 0, high: recent - 1 },
    { set: { completed: 0 } },
    { set: { recovery: false } },
    { note: 'rest' },
    { set: { note: 0 } },
    { set: { verification: false } },
    { set: { rules: false } },
    { set: { brief: true } },
    { set: { rationale: false } },
    { knob: 'entryTokens', low: MIN_ENTRY_TOKENS, high: longest - 1 },
    { set: { entryTokens: MIN_ENTRY_TOKENS } },
    { knob: 'listed', low: 1, high: longestList - 1 },
    { set: { listed: 1 } },
  ];
  for (const move of moves) {
    if ('set' in move) {
      plan = { ...plan, ...move.set };
      if (fits(plan)) return plan;
      continue;
    }
    if ('note' in move) {
      const found = noteThatFits(plan, noteTokens, over);
      if (found !== undefined) return found;
      continue;
    }
    const found = largestFitting(move.low, move.high, (value) => fits({ ...plan, [move.knob]: value }));
    if (found !== undefined) return { ...plan, [move.knob]: found };
  }
  return undefined;
}

/**
 * The plan with the note cut to the tokens the rest of the prompt leaves, if
 * that is at least `MIN_NOTE_TOKENS`. Computed rather than searched: cutting
 * a long note is the costliest step, so it is done a few times, not twenty.
 */
function noteThatFits(plan: Plan, noteTokens: number, over: (plan: Plan) => number): Plan | undefined {
  // The heading and the blank lines around the note cost a few tokens of their own.
  let room = Math.min(noteTokens - 1, -over({ ...plan, note: 0 }) - NOTE_OVERHEAD);
  for (let attempt = 0; attempt < 3 && room >= MIN_NOTE_TOKENS; attempt += 1) {
    const candidate = { ...plan, note: room };
    const excess = over(candidate);
    if (excess <= 0) return candidate;
    room -= excess;
  }
  return undefined;
}

/** Binary search for the largest value in [low, high] that fits, assuming fewer tokens for smaller values. */
function largestFitting(low: number, high: number, fits: (value: number) => boolean): number | undefined {
  if (high < low || !fits(low)) return undefined;
  let lo = low;
  let hi = high;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The current step and the next action: the lines the one-line form serves first. */
const LEAD_LINES = 2;
/** The fewest tokens a cut line gets: a lead line, and any other (which says nothing shorter). */
const LEAD_LINE_MIN = 6;
const OTHER_LINE_MIN = 12;

/**
 * The one-line form fitted to `max` tokens. As many lines as their minimum
 * shares allow are kept, in order; the budget is then shared so that no line
 * gets more than its need, the lead lines up to twice as much as the others,
 * and what is left goes to the earliest lines. Each line takes its richest
 * variant that fits its share whole, else its shortest cut to fit. Never
 * empty: when not even a word fits, the answer is the first tokens of the
 * first line.
 */
function fitLines(lines: string[][], max: number, counter: TokenCounter, cut: Cut): string {
  const need = lines.map((variants) => counter.count(`${variants[0]}\n`));
  const least = need.map((n, i) => Math.min(n, i < LEAD_LINES ? LEAD_LINE_MIN : OTHER_LINE_MIN));
  let kept = 1;
  while (kept < lines.length && least.slice(0, kept + 1).reduce((a, b) => a + b, 0) <= max) kept += 1;
  const share = (c: number) => need.slice(0, kept).map((n, i) => Math.min(n, Math.max(least[i]!, (i < LEAD_LINES ? 2 : 1) * c)));
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const level = largestFitting(0, max, (c) => sum(share(c)) <= max) ?? 0;
  const shares = kept === 1 ? [Math.min(need[0]!, max)] : share(level);
  let spare = max - sum(shares);
  for (let i = 0; i < shares.length && spare > 0; i++) {
    const more = Math.min(spare, need[i]! - shares[i]!);
    shares[i]! += more;
    spare -= more;
  }
  const out: string[] = [];
  shares.forEach((allowance, i) => {
    const variants = lines[i]!;
    let piece = variants.map((v) => `${v}\n`).find((v) => counter.count(v) <= allowance) ?? '';
    for (let room = allowance - 1; piece === '' && room >= 2; room -= 1) {
      const shorter = cut(variants.at(-1)!, room);
      if (shorter.length > 1 && counter.count(`${shorter}\n`) <= allowance) piece = `${shorter}\n`;
    }
    if (piece !== '') out.push(piece);
  });
  if (out.length > 0) return out.join('');
  return cutToTokens(lines[0]?.at(-1) ?? 'Resume', max, '') || 'Resume';
}
