/**
 * Where everything of a task's story sits on the timeline: one lane per
 * agent, time running left to right. Two spacings: by order (each distinct
 * moment one step further, so events milliseconds apart and days apart both
 * stay readable; the times are written on the axis), and proportional to
 * time. Pure: numbers in, numbers out.
 *
 * @module
 */
import type { Story } from './story.js';

export type Spacing = 'order' | 'time';

export const GEOMETRY = {
  labelWidth: 150,
  top: 56,
  laneHeight: 82,
  pointOffset: 24,
  leaseOffset: 52,
  axisHeight: 44,
  step: 68,
  maxStep: 160,
  pad: 28,
  right: 120,
} as const;

export interface Layout {
  /** Room for the agents' names: less on a narrow screen, so the chart itself shows. */
  labelWidth: number;
  width: number;
  height: number;
  x: (iso: string) => number;
  laneY: (agent: string) => number;
  points: Map<string, { x: number; y: number }>;
  ticks: { x: number; at: string }[];
}

function times(story: Story): string[] {
  const all = new Set<string>();
  for (const p of story.points) all.add(p.at);
  for (const h of story.handoffs) {
    all.add(h.at);
    if (h.acknowledgedAt) all.add(h.acknowledgedAt);
  }
  for (const r of story.recoveries) all.add(r.at);
  for (const b of story.blocks) all.add(b.at);
  for (const l of story.leases) {
    all.add(l.from);
    all.add(l.to);
  }
  return [...all].sort();
}

/** `minWidth` is the room the page gives the chart: the steps grow to fill it (up to a limit), never shrink below readable. */
export function layout(story: Story, spacing: Spacing, minWidth = 0): Layout {
  const { top, laneHeight, pointOffset, axisHeight, pad, right } = GEOMETRY;
  const labelWidth = minWidth > 0 && minWidth < 600 ? 100 : GEOMETRY.labelWidth;
  const moments = times(story);
  const left = labelWidth + pad;
  const room = minWidth - left - right;
  let x: (iso: string) => number;
  let span: number;
  if (spacing === 'order' || moments.length < 2) {
    const slot = new Map(moments.map((at, i) => [at, i]));
    const gaps = Math.max(1, moments.length - 1);
    const step = Math.min(GEOMETRY.maxStep, Math.max(GEOMETRY.step, room / gaps));
    span = Math.max(0, moments.length - 1) * step;
    x = (iso) => left + (slot.get(iso) ?? 0) * step;
  } else {
    const t0 = Date.parse(moments[0]!);
    const t1 = Date.parse(moments[moments.length - 1]!);
    span = Math.max(640, moments.length * 28, room);
    x = (iso) => left + ((Date.parse(iso) - t0) / Math.max(1, t1 - t0)) * span;
  }
  const laneIndex = new Map(story.lanes.map((agent, i) => [agent, i]));
  const laneY = (agent: string): number => top + (laneIndex.get(agent) ?? 0) * laneHeight;

  // Two checkpoints of one lane at the same moment would hide each other: the later one moves right.
  const points = new Map<string, { x: number; y: number }>();
  const taken = new Map<string, number[]>();
  for (const point of story.points) {
    const used = taken.get(point.agentId) ?? [];
    let px = x(point.at);
    while (used.some((u) => Math.abs(u - px) < 16)) px += 16;
    used.push(px);
    taken.set(point.agentId, used);
    points.set(point.id, { x: px, y: laneY(point.agentId) + pointOffset });
  }

  const ticks: Layout['ticks'] = [];
  const candidates = spacing === 'order' || moments.length < 2 ? moments : evenly(moments[0]!, moments[moments.length - 1]!, Math.max(2, Math.floor(span / 140)));
  let last = -Infinity;
  for (const at of candidates) {
    const tx = x(at);
    if (tx - last < 104) continue;
    ticks.push({ x: tx, at });
    last = tx;
  }

  const width = Math.max(minWidth, left + span + right);
  const height = top + Math.max(1, story.lanes.length) * laneHeight + axisHeight;
  return { labelWidth, width, height, x, laneY, points, ticks };
}

function evenly(from: string, to: string, count: number): string[] {
  const a = Date.parse(from);
  const b = Date.parse(to);
  return Array.from({ length: count + 1 }, (_, i) => new Date(a + ((b - a) * i) / count).toISOString());
}
