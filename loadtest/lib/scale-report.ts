/**
 * How the growth benchmark prints its figures: one table of the empty and the
 * loaded store side by side, their ratio, and the targets with a
 * verdict (create rate and history(100) p50 within 1.2x of the empty store,
 * every search p50 under 20 ms, bytes on disk per checkpoint at most 3x its
 * canonical JSON), and the verdicts as data for the RESULT line.
 *
 * @module
 */
import { CONNECTIONS } from './http-config.js';
import { times, verdict } from './http-report.js';
import { TARGETS } from './scale-config.js';
import { readScenarios, type StoreShape } from './scale-data.js';
import type { PhaseFigures } from './scale-phase.js';
import type { Latency } from './stats.js';
import { alignedTable, fixed } from './tables.js';

export interface Verdicts {
  createRate: boolean;
  historyP50: boolean;
  searchP50: Record<string, boolean>;
  diskOverCanonical: boolean;
}

/** Bytes on disk (allocated) per checkpoint over its canonical JSON size. */
export const diskOverCanonical = (phase: PhaseFigures): number => phase.diskPerCheckpoint.allocatedBytes / phase.canonicalBytes;

export function verdictsOf(empty: PhaseFigures, loaded: PhaseFigures, shape: StoreShape): Verdicts {
  const searchP50: Record<string, boolean> = {};
  for (const { key, kind } of readScenarios(shape)) if (kind === 'search') searchP50[key] = loaded.reads[key]!.p50Ms < TARGETS.searchP50Ms;
  return {
    createRate: loaded.create.okPerSec * TARGETS.growth >= empty.create.okPerSec,
    historyP50: loaded.reads.history!.p50Ms <= TARGETS.growth * empty.reads.history!.p50Ms,
    searchP50,
    diskOverCanonical: diskOverCanonical(loaded) <= TARGETS.diskOverCanonical,
  };
}

const mb = (bytes: number): string => fixed(bytes / 1024 ** 2, 1);
const count = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en') : '-');
const pair = (l: Latency): string => `${fixed(l.p50Ms, 2)} / ${fixed(l.p99Ms, 2)}`;
const ratioPair = (e: Latency, l: Latency): string => `${times(l.p50Ms / e.p50Ms)} / ${times(l.p99Ms / e.p99Ms)}`;

/** The table: figure | empty store | loaded store | loaded/empty | target | verdict | note. */
export function scaleTable(empty: PhaseFigures, loaded: PhaseFigures, shape: StoreShape): string {
  const v = verdictsOf(empty, loaded, shape);
  const growth = `${TARGETS.growth}x`;
  const rows: string[][] = [
    ['checkpoints held', count(empty.checkpoints), count(loaded.checkpoints), times(loaded.checkpoints / empty.checkpoints), '', '', `tasks ${count(empty.tasks)} / ${count(loaded.tasks)}`],
    ['server start to /readyz, s', fixed(empty.startSeconds, 2), fixed(loaded.startSeconds, 2), times(loaded.startSeconds / empty.startSeconds), '', '', ''],
    [
      `create rate, 2xx/s (${CONNECTIONS} conns)`,
      fixed(empty.create.okPerSec, 0),
      fixed(loaded.create.okPerSec, 0),
      times(loaded.create.okPerSec / empty.create.okPerSec),
      `>= empty / ${growth}`,
      verdict(v.createRate),
      `non-2xx ${empty.create.non2xx} / ${loaded.create.non2xx}`,
    ],
    [`create p50 / p99, ms (${CONNECTIONS} conns)`, pair(empty.create), pair(loaded.create), ratioPair(empty.create, loaded.create), '', '', ''],
  ];
  for (const scenario of readScenarios(shape)) {
    const e = empty.reads[scenario.key]!;
    const l = loaded.reads[scenario.key]!;
    let target = '';
    let met = '';
    if (scenario.key === 'history') {
      target = `p50 <= ${growth} empty`;
      met = verdict(v.historyP50);
    } else if (scenario.kind === 'search') {
      target = `p50 < ${TARGETS.searchP50Ms} ms`;
      met = verdict(v.searchP50[scenario.key] ?? false);
    }
    const notes = [`${count(l.meanBytes)} B`];
    if (l.meanItems !== undefined) notes.push(`items/page ${fixed(e.meanItems ?? NaN, 1)} / ${fixed(l.meanItems, 1)}`);
    if (l.cutShort !== undefined) notes.push(`cut short ${e.cutShort} / ${l.cutShort} of ${l.requests}`);
    if (e.non200 + l.non200 > 0) notes.push(`non-200 ${e.non200} / ${l.non200}`);
    rows.push([`${scenario.name} p50 / p99, ms`, pair(e), pair(l), ratioPair(e, l), target, met, notes.join(', ')]);
  }
  rows.push(
    ['bytes on disk / checkpoint (allocated)', count(empty.diskPerCheckpoint.allocatedBytes), count(loaded.diskPerCheckpoint.allocatedBytes), times(loaded.diskPerCheckpoint.allocatedBytes / empty.diskPerCheckpoint.allocatedBytes), '', '', `data.mdb (and runs/) ${mb(empty.disk.allocatedBytes)} / ${mb(loaded.disk.allocatedBytes)} MB`],
    ['bytes on disk / checkpoint (apparent)', count(empty.diskPerCheckpoint.apparentBytes), count(loaded.diskPerCheckpoint.apparentBytes), times(loaded.diskPerCheckpoint.apparentBytes / empty.diskPerCheckpoint.apparentBytes), '', '', `data.mdb ${mb(empty.disk.apparentBytes)} / ${mb(loaded.disk.apparentBytes)} MB`],
    ['canonical JSON / checkpoint, B', count(empty.canonicalBytes), count(loaded.canonicalBytes), times(loaded.canonicalBytes / empty.canonicalBytes), '', '', `mean of ${empty.canonicalSamples} / ${loaded.canonicalSamples} checkpoints`],
    ['disk (allocated) / canonical JSON', times(diskOverCanonical(empty)), times(diskOverCanonical(loaded)), '', `<= ${TARGETS.diskOverCanonical}x`, verdict(v.diskOverCanonical), ''],
    ['server RSS at end, MB', fixed(empty.memory?.rssMB ?? NaN, 0), fixed(loaded.memory?.rssMB ?? NaN, 0), times((loaded.memory?.rssMB ?? NaN) / (empty.memory?.rssMB ?? NaN)), '', '', `anon ${fixed(empty.memory?.anonMB ?? NaN, 0)} / ${fixed(loaded.memory?.anonMB ?? NaN, 0)} MB`],
  );
  const head = ['figure', 'empty store', 'loaded store', 'loaded/empty', 'target', 'verdict', 'note (empty / loaded)'];
  // alignedTable aligns only leading columns left; notes padded to one width read left-aligned too.
  const width = Math.max(head[6]!.length, ...rows.map((row) => row[6]!.length));
  return alignedTable(
    head.map((cell, i) => (i === 6 ? cell.padEnd(width) : cell)),
    rows.map((row) => row.map((cell, i) => (i === 6 ? cell.padEnd(width) : cell))),
    1,
  );
}
