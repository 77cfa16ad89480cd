/**
 * The timeline drawn in SVG: a lane per agent with its checkpoints (each a
 * link to the checkpoint view) and the leases it held with their epochs;
 * lineage as lines from parent to child; handoffs as arrows from the agent
 * that handed off to the one that took over; recoveries and blocks as
 * vertical marks across the lanes. Shapes and words carry the meaning, not
 * colour alone; the story below the chart says the same in a list.
 *
 * @module
 */
import { html } from 'htm/preact';
import { formatDate, formatDateTime, formatTime, shortId } from './format.js';
import { paths } from './router.js';
import type { Point, Story } from './story.js';
import { GEOMETRY as G, layout, type Spacing } from './timeline-layout.js';

const truncate = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function pointLabel(point: Point): string {
  if (point.broken) return `Broken checkpoint ${point.id} by ${point.agentId}, written ${formatDateTime(point.at)}: its content no longer matches its hash`;
  const state = point.status === 'finalized' ? `finalized${point.finalStatus ? ` (${point.finalStatus})` : ''}` : 'active';
  return `Checkpoint ${point.id} by ${point.agentId}, version ${point.version}, ${point.phase ?? 'no phase'}, ${state}, created ${formatDateTime(point.at)}`;
}

function PointMark({ point, x, y }: { point: Point; x: number; y: number }) {
  let shape;
  if (point.broken) {
    shape = html`<path class="point-broken" d=${`M${x - 7},${y - 7} L${x + 7},${y + 7} M${x + 7},${y - 7} L${x - 7},${y + 7}`} />`;
  } else if (point.status === 'finalized') {
    shape = html`<rect class="point-final" x=${x - 7} y=${y - 7} width="14" height="14" />`;
  } else {
    shape = html`<circle class="point-active" cx=${x} cy=${y} r="7" />`;
  }
  const caption = point.broken ? 'broken' : `v${point.version}`;
  // The name starts with the visible caption, so speech input can say what is seen.
  return html`<a href=${paths.checkpoint(point.id)} aria-label=${`${caption}: ${pointLabel(point)}`} class="point" data-checkpoint=${point.id}>
    <title>${pointLabel(point)}</title>
    <circle class="hit" cx=${x} cy=${y} r="13" />
    ${shape}
    <text x=${x} y=${y + 22} text-anchor="middle" class=${point.broken ? 'caption caption-broken' : 'caption'}>${caption}</text>
  </a>`;
}

function curve(a: { x: number; y: number }, b: { x: number; y: number }): string {
  if (a.y === b.y) return `M${a.x},${a.y} L${b.x},${b.y}`;
  const mid = (a.x + b.x) / 2;
  return `M${a.x},${a.y} C${mid},${a.y} ${mid},${b.y} ${b.x},${b.y}`;
}

export function TimelineChart({ story, spacing, taskId, width }: { story: Story; spacing: Spacing; taskId: string; width: number }) {
  const l = layout(story, spacing, width);
  const bottom = l.height - G.axisHeight;
  const handoffPairs = new Set(story.handoffs.map((h) => `${h.checkpointId}>${h.childCheckpointId ?? ''}`));
  const marks = [
    ...story.recoveries.map((r) => ({
      at: r.at,
      kind: r.status === 'blocked' ? 'blocked' : 'recovery',
      label: r.status === 'initiated' ? `recovery (${r.failureKind ?? 'failure'})` : r.status === 'completed' ? `recovered by ${r.agentId ?? '?'}` : 'recovery blocked',
      title: `Recovery ${r.status} ${formatDateTime(r.at)}${r.reason ? `: ${r.reason}` : ''}`,
    })),
    ...story.blocks.filter((b) => b.kind === 'unblocked').map((b) => ({ at: b.at, kind: 'recovery', label: 'unblocked', title: `Unblocked ${formatDateTime(b.at)}` })),
  ].sort((a, b) => a.at.localeCompare(b.at));

  return html`<svg class="timeline" width=${l.width} height=${l.height} viewBox=${`0 0 ${l.width} ${l.height}`} role="group" aria-labelledby="timeline-title">
    <title id="timeline-title">Timeline of task ${taskId}: checkpoints per agent, lineage, handoffs, recoveries and leases</title>
    <defs>
      <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
        <path d="M0,0 L10,5 L0,10 z" class="arrow-head" />
      </marker>
    </defs>
    ${story.lanes.map(
      (agent, i) => html`<g class="lane">
        <rect class=${i % 2 === 0 ? 'lane-bg' : 'lane-bg lane-bg-alt'} x="0" y=${l.laneY(agent)} width=${l.width} height=${G.laneHeight} />
        <g><title>${agent}</title><text x="8" y=${l.laneY(agent) + G.pointOffset + 4} class="lane-label">${truncate(agent, Math.floor(l.labelWidth / 8))}</text></g>
      </g>`,
    )}
    <text x="8" y="20" class="band-label">task</text>
    ${marks.map(
      (m, i) => html`<g class=${`mark mark-${m.kind}`}>
        <title>${m.title}</title>
        <line x1=${l.x(m.at)} x2=${l.x(m.at)} y1=${G.top - 14} y2=${bottom} />
        <text x=${l.x(m.at) + 4} y=${i % 2 === 0 ? 20 : 36}>${m.label}</text>
      </g>`,
    )}
    ${story.leases.map((lease) => {
      const x1 = l.x(lease.from);
      const width = Math.max(6, l.x(lease.to) - x1);
      const y = l.laneY(lease.agentId) + G.leaseOffset;
      return html`<g class=${`lease lease-${lease.end}`}>
        <title>Lease of ${lease.agentId}, epoch ${lease.epoch}: ${formatDateTime(lease.from)} to ${formatDateTime(lease.to)} (${lease.end})</title>
        <rect x=${x1} y=${y} width=${width} height="8" rx="2" />
        <text x=${x1} y=${y + 21}>epoch ${lease.epoch}${lease.end === 'live' ? ' (holds it)' : ''}</text>
      </g>`;
    })}
    ${story.edges
      .filter((e) => !handoffPairs.has(`${e.from}>${e.to}`))
      .map((e) => {
        const a = l.points.get(e.from);
        const b = l.points.get(e.to);
        return a && b ? html`<path class="edge" d=${curve(a, b)}><title>Lineage: ${shortId(e.from)} is the parent of ${shortId(e.to)}</title></path>` : null;
      })}
    ${story.handoffs.map((h) => {
      const a = l.points.get(h.checkpointId) ?? { x: l.x(h.at), y: l.laneY(h.from) + G.pointOffset };
      const b = (h.childCheckpointId && l.points.get(h.childCheckpointId)) || { x: a.x + G.step, y: story.lanes.includes(h.to) ? l.laneY(h.to) + G.pointOffset : a.y + G.laneHeight / 2 };
      const label = `handoff · ${h.trigger}`;
      return html`<g class="handoff">
        <title>Handoff ${h.id} (${h.trigger}) from ${h.from} to ${h.to}, ${h.status}, ${formatDateTime(h.at)}</title>
        <path d=${curve(a, b)} marker-end="url(#arrow)" />
        <text x=${(a.x + b.x) / 2 + 6} y=${(a.y + b.y) / 2 - 4}>${label}</text>
      </g>`;
    })}
    ${story.points.map((point) => {
      const at = l.points.get(point.id)!;
      return html`<${PointMark} point=${point} x=${at.x} y=${at.y} />`;
    })}
    <g class="axis">
      <line x1=${l.labelWidth} x2=${l.width - 20} y1=${bottom + 4} y2=${bottom + 4} />
      ${l.ticks.map(
        (t, i) => html`<g>
          <line x1=${t.x} x2=${t.x} y1=${bottom + 4} y2=${bottom + 10} />
          <text x=${t.x} y=${bottom + 24} text-anchor="middle">${formatTime(t.at)}</text>
          ${i === 0 ? html`<text x=${t.x} y=${bottom + 40} text-anchor="middle" class="axis-date">${formatDate(t.at)}</text>` : null}
        </g>`,
      )}
    </g>
  </svg>`;
}
