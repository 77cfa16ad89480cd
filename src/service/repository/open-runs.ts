/**
 * The text of a task's open runs (`openTerms (taskId)`, `terms.ts`): each
 * word of the task's newest checkpoint and where its run starts. The merge
 * rewrites the row for every task it merges, so its size is pages: LMDB
 * keeps a value of more than about 2,000 bytes (a 4 KB page's node limit)
 * on an overflow page of its own, and a row of a hundred words with a line
 * per word and full positions was ~2.4 KB, so every rewrite wrote a leaf and
 * a fresh overflow page (issue 44, `docs/performance.md`).
 *
 * Store format 8 writes one line per start, its words after it:
 * `+TIME ID<tab>word word …`, with the start's time and id packed when they
 * are in their usual form (an ISO time to the millisecond as milliseconds in
 * base 36; a UUID as its 16 bytes in base64url) and written as they are,
 * after `=`, when not. Format 7 wrote `@n createdAt checkpointId` lines, then
 * `word n` lines; a row in that form is read as ever (rewritten in the new
 * one by the next merge). Words, times and ids hold no space, tab or line
 * break; runs that start together share one position object, told apart by
 * identity.
 *
 * @module
 */
import type { IndexPosition } from './indexes.js';

/** The open runs as the row's text (store format 8). */
export function openRunsText(runs: ReadonlyMap<string, IndexPosition>): string {
  // The words of a start mostly lie together in the map (a merge adds a checkpoint's new words together and changes
  // the rest in place): then the text is written in one pass, its pieces in one array joined once. Otherwise they
  // are gathered by start first. Appending to each line made a string a word (~20 KB a merged checkpoint).
  const pass: InOnePass = { parts: new Array<string>(runs.size * 2 + 32), count: 0, start: undefined, done: [], apart: false };
  runs.forEach(appendRun, pass);
  if (!pass.apart) {
    if (pass.start !== undefined) pass.parts[pass.count++] = '\n';
    pass.parts.length = pass.count;
    return pass.parts.join('');
  }
  const lines = new Map<IndexPosition, string[]>();
  runs.forEach(gatherByStart, lines);
  const text: string[] = [];
  lines.forEach(pushLine, text);
  return text.join('');
}

/** {@link openRunsText} in one pass: the pieces so far, the start of the line being written, the starts written before. */
interface InOnePass {
  parts: string[];
  count: number;
  start: IndexPosition | undefined;
  done: IndexPosition[];
  /** A start's words were found apart: the pass gives up. */
  apart: boolean;
}

// The callbacks below are module functions, not closures made at each call: the merge thread's code made afresh for
// each batch lost its optimized code between batches (a collection cleared it) and was optimized again, ~80 µs a create.
function appendRun(this: InOnePass, start: IndexPosition, word: string): void {
  if (this.apart) return;
  if (start === this.start) {
    this.parts[this.count++] = ' ';
    this.parts[this.count++] = word;
    return;
  }
  if (this.start !== undefined) {
    this.parts[this.count++] = '\n';
    this.done.push(this.start);
    if (this.done.includes(start)) {
      this.apart = true;
      return;
    }
  }
  this.start = start;
  this.parts[this.count++] = `${ENDED.has(start) ? '-' : '+'}${positionText(start)}\t`;
  this.parts[this.count++] = word;
}

function gatherByStart(this: Map<IndexPosition, string[]>, start: IndexPosition, word: string): void {
  const words = this.get(start);
  if (words === undefined) this.set(start, [word]);
  else words.push(word);
}

function pushLine(this: string[], words: string[], start: IndexPosition): void {
  this.push(`${ENDED.has(start) ? '-' : '+'}${positionText(start)}\t${words.join(' ')}\n`);
}

/** Starts some of whose runs have ended, by identity: positions made by {@link markedEnded} or read from a `-` line. */
const ENDED = new WeakSet<IndexPosition>();

/** Whether some runs of the task that start at `start` (an open run's position, as read or made here) have ended. */
export function endedBefore(start: IndexPosition): boolean {
  return ENDED.has(start);
}

/** `start` as a new position object marked as a start some of whose runs have ended; `start` itself, shared, is left as it is. */
export function markedEnded(start: IndexPosition): IndexPosition {
  const marked = { createdAt: start.createdAt, checkpointId: start.checkpointId };
  ENDED.add(marked);
  return marked;
}

/** The open runs a row's text holds, in either format. */
export function openRunsOf(text: string): Map<string, IndexPosition> {
  const first = text.charCodeAt(0);
  return first === PLUS || first === MINUS ? fromLines(text) : fromFormat7(text);
}

function fromLines(text: string): Map<string, IndexPosition> {
  const runs = new Map<string, IndexPosition>();
  for (const line of text.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    const start = positionOf(line.slice(1, tab));
    if (line.charCodeAt(0) === MINUS) ENDED.add(start);
    for (const word of line.slice(tab + 1).split(' ')) runs.set(word, start);
  }
  return runs;
}

/** Lines: each start as `@n createdAt checkpointId`, then each word as `word n`. */
function fromFormat7(text: string): Map<string, IndexPosition> {
  const runs = new Map<string, IndexPosition>();
  const starts = new Map<string, IndexPosition>();
  for (const line of text.split('\n')) {
    const space = line.indexOf(' ');
    // No open run at all is the empty text.
    if (space < 0) continue;
    const head = line.slice(0, space);
    const tail = line.slice(space + 1);
    if (head.charCodeAt(0) === AT) starts.set(head.slice(1), { createdAt: tail.slice(0, tail.indexOf(' ')), checkpointId: tail.slice(tail.indexOf(' ') + 1) });
    else runs.set(head, starts.get(tail)!);
  }
  return runs;
}

/** Positions written by this process, by identity: the merge writes the same starts task after task. */
const written = new WeakMap<IndexPosition, string>();

function positionText(position: IndexPosition): string {
  let text = written.get(position);
  if (text === undefined) {
    text = `${timeText(position.createdAt)} ${idText(position.checkpointId)}`;
    written.set(position, text);
  }
  return text;
}

function positionOf(text: string): IndexPosition {
  const space = text.indexOf(' ');
  return { createdAt: timeOf(text.slice(0, space)), checkpointId: idOf(text.slice(space + 1)) };
}

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function timeText(createdAt: string): string {
  const ms = ISO_TIME.test(createdAt) ? Date.parse(createdAt) : NaN;
  return ms >= 0 && new Date(ms).toISOString() === createdAt ? ms.toString(36) : `=${createdAt}`;
}

function timeOf(text: string): string {
  return text.charCodeAt(0) === EQUALS ? text.slice(1) : new Date(parseInt(text, 36)).toISOString();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function idText(id: string): string {
  return UUID.test(id) ? Buffer.from(id.replace(/-/g, ''), 'hex').toString('base64url') : `=${id}`;
}

function idOf(text: string): string {
  if (text.charCodeAt(0) === EQUALS) return text.slice(1);
  const hex = Buffer.from(text, 'base64url').toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** `+`, which starts a line of store format 8. */
const PLUS = 0x2b;
/** `-`, which starts a line of a start some of whose runs have ended (format 10). */
const MINUS = 0x2d;
/** `@`, which starts a line of a start position in format 7. */
const AT = 0x40;
/** `=`, before a time or id written as it is. */
const EQUALS = 0x3d;
