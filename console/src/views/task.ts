/**
 * A task's timeline (`/console/tasks/:taskId`): its state and lease holder
 * now, then its whole story on a time axis (timeline-chart.ts) and in
 * words: handoffs, recoveries and blocks, leases with their epochs, and
 * every audit entry as a sentence. Read from `GET /v1/tasks/:taskId`, its
 * history, its audit trail and its handoff records.
 *
 * @module
 */
import { html } from 'htm/preact';
import type { RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Handoff, TaskInfo } from '../../../src/client/types.js';
import { allPages, Badge, Loading, PageTitle, Problem, useLoad } from '../components.js';
import { formatDateTime, shortId } from '../format.js';
import { paths } from '../router.js';
import { client, onStreamState, type StreamState } from '../session.js';
import { buildStory, type Story } from '../story.js';
import { TimelineChart } from '../timeline-chart.js';
import type { Spacing } from '../timeline-layout.js';

/** The most checkpoints and audit entries one timeline reads; a longer task says it shows the first ones. */
const MAX_ITEMS = 5_000;

interface TaskData {
  task: TaskInfo;
  story: Story;
  complete: boolean;
}

async function loadTask(taskId: string, signal: AbortSignal): Promise<TaskData> {
  const task = await client.tasks.get(taskId, { signal });
  const [history, audit] = await Promise.all([
    allPages((cursor) => client.checkpoints.history(taskId, { limit: 1000, ...(cursor ? { cursor } : {}) }, { signal }), MAX_ITEMS),
    allPages((cursor) => client.tasks.audit(taskId, { limit: 1000, ...(cursor ? { cursor } : {}) }, { signal }), MAX_ITEMS),
  ]);
  const corrupted = [...new Set(history.pages.flatMap((page) => page.corrupted ?? []))];
  // Every handoff is named by the audit entry of its acknowledgment, or is the task's open one.
  const ids = new Set(audit.items.flatMap((entry) => (typeof entry.details?.handoffId === 'string' ? [entry.details.handoffId] : [])));
  if (task.openHandoff) ids.add(task.openHandoff.id);
  const handoffs: Handoff[] = [];
  for (const id of ids) handoffs.push(task.openHandoff?.id === id ? task.openHandoff : await client.handoffs.get(id, { signal }));
  const story = buildStory({ task, checkpoints: history.items, corrupted, audit: audit.items, handoffs });
  return { task, story, complete: history.complete && audit.complete };
}

function Summary({ task }: { task: TaskInfo }) {
  return html`<dl class="summary">
    <div><dt>State</dt><dd><${Badge} kind=${task.state}>${task.state}<//></dd></div>
    <div><dt>Lease</dt><dd>${task.lease ? html`held by <strong>${task.lease.agentId}</strong>, epoch ${task.lease.epoch}, until ${formatDateTime(task.lease.expiresAt)}` : 'no live lease'}</dd></div>
    <div><dt>Newest epoch</dt><dd>${task.epoch}</dd></div>
    <div><dt>Checkpoints written</dt><dd>${task.checkpoints}</dd></div>
    <div><dt>Latest</dt><dd>${task.latestCheckpointId ? html`<a href=${paths.checkpoint(task.latestCheckpointId)} class="mono">${shortId(task.latestCheckpointId)}</a>` : 'none'}</dd></div>
    <div><dt>Recovery point</dt><dd>${task.recoveryPointId ? html`<a href=${paths.checkpoint(task.recoveryPointId)} class="mono">${shortId(task.recoveryPointId)}</a>` : 'none verifies'}</dd></div>
    ${task.openHandoff ? html`<div><dt>Waiting handoff</dt><dd>${task.openHandoff.trigger}, from ${task.openHandoff.fromAgentId}</dd></div>` : null}
    ${task.blocked ? html`<div><dt>Blocked</dt><dd>since ${formatDateTime(task.blocked.at)}: ${task.blocked.reason}</dd></div>` : null}
    <div><dt>Last change</dt><dd>${formatDateTime(task.updatedAt)}</dd></div>
  </dl>`;
}

function Legend() {
  return html`<ul class="legend" aria-label="Legend">
    <li><svg width="16" height="16" aria-hidden="true"><circle class="point-active" cx="8" cy="8" r="6" /></svg> active checkpoint</li>
    <li><svg width="16" height="16" aria-hidden="true"><rect class="point-final" x="2" y="2" width="12" height="12" /></svg> finalized checkpoint</li>
    <li><svg width="16" height="16" aria-hidden="true"><path class="point-broken" d="M2,2 L14,14 M14,2 L2,14" /></svg> broken: no longer matches its hash</li>
    <li><svg width="24" height="16" aria-hidden="true"><path class="edge" d="M0,8 L24,8" /></svg> lineage (parent to child)</li>
    <li><svg width="24" height="16" aria-hidden="true" class="handoff"><path d="M0,8 L24,8" /></svg> handoff</li>
    <li><svg width="24" height="16" aria-hidden="true" class="lease lease-superseded"><rect x="0" y="4" width="24" height="8" /></svg> lease with its epoch</li>
    <li><svg width="24" height="16" aria-hidden="true" class="lease lease-expired"><rect x="0" y="4" width="24" height="8" /></svg> lease that expired or was revoked</li>
    <li><svg width="16" height="16" aria-hidden="true" class="mark mark-recovery"><line x1="8" x2="8" y1="0" y2="16" /></svg> recovery</li>
    <li><svg width="16" height="16" aria-hidden="true" class="mark mark-blocked"><line x1="8" x2="8" y1="0" y2="16" /></svg> blocked</li>
  </ul>`;
}

function Tables({ story }: { story: Story }) {
  return html`
    <h2>Handoffs</h2>
    ${story.handoffs.length === 0
      ? html`<p>No handoff.</p>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Handoffs"><table>
          <thead><tr><th scope="col">When</th><th scope="col">Trigger</th><th scope="col">From → to</th><th scope="col">Status</th><th scope="col">Final checkpoint</th><th scope="col">Resumed in</th></tr></thead>
          <tbody>${story.handoffs.map(
            (h) => html`<tr>
              <td>${formatDateTime(h.at)}</td><td>${h.trigger}</td><td>${h.from} → ${h.to}</td><td>${h.status}</td>
              <td><a class="mono" href=${paths.checkpoint(h.checkpointId)}>${shortId(h.checkpointId)}</a></td>
              <td>${h.childCheckpointId ? html`<a class="mono" href=${paths.checkpoint(h.childCheckpointId)}>${shortId(h.childCheckpointId)}</a>` : 'not yet'}</td>
            </tr>`,
          )}</tbody></table></div>`}
    <h2>Recoveries and blocks</h2>
    ${story.recoveries.length === 0 && story.blocks.length === 0
      ? html`<p>No recovery.</p>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Recoveries and blocks"><table>
          <thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Failure</th><th scope="col">Reason</th><th scope="col">Agent</th><th scope="col">From checkpoint</th></tr></thead>
          <tbody>${story.recoveries.map(
            (r) => html`<tr>
              <td>${formatDateTime(r.at)}</td><td>recovery ${r.status}</td><td>${r.failureKind ?? ''}</td><td>${r.reason ?? ''}</td><td>${r.agentId ?? ''}</td>
              <td>${r.checkpointId ? html`<a class="mono" href=${paths.checkpoint(r.checkpointId)}>${shortId(r.checkpointId)}</a>` : ''}</td>
            </tr>`,
          )}${story.blocks
            .filter((b) => b.kind === 'unblocked')
            .map((b) => html`<tr><td>${formatDateTime(b.at)}</td><td>unblocked</td><td></td><td>${b.reason}</td><td></td><td></td></tr>`)}</tbody></table></div>`}
    <h2>Leases</h2>
    ${story.leases.length === 0
      ? html`<p>No lease was ever taken.</p>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Leases"><table>
          <thead><tr><th scope="col">Holder</th><th scope="col">Epoch</th><th scope="col">From</th><th scope="col">To</th><th scope="col">Ended</th></tr></thead>
          <tbody>${story.leases.map(
            (l) => html`<tr><td>${l.agentId}</td><td>${l.epoch}</td><td>${formatDateTime(l.from)}</td><td>${formatDateTime(l.to)}</td><td>${l.end === 'live' ? 'still held' : l.end}</td></tr>`,
          )}</tbody></table></div>`}
    <h2>The story, entry by entry</h2>
    <ol class="story">
      ${story.lines.map(
        (line) => html`<li>
          <span class="muted">#${line.seq} ${formatDateTime(line.at)}</span> <strong>${line.who}</strong> ${line.what}
          ${line.checkpointId ? html` <a class="mono" href=${paths.checkpoint(line.checkpointId)}>${shortId(line.checkpointId)}</a>` : null}
        </li>`,
      )}
    </ol>`;
}

/** The width of the element `ref` points at (once `shown`), followed as the window changes. */
function useWidth(shown: boolean): [RefObject<HTMLDivElement | null>, number] {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setWidth(element.clientWidth));
    observer.observe(element);
    return () => observer.disconnect();
  }, [shown]);
  return [ref, width];
}

/**
 * While `on`, reloads the task shortly after each event about it (the
 * tenant's event stream, as the live view reads it); the state of the
 * stream's connection, to show.
 */
function useFollow(taskId: string, on: boolean, reload: () => void): StreamState | undefined {
  const [state, setState] = useState<StreamState | undefined>(undefined);
  useEffect(() => {
    if (!on) return;
    const abort = new AbortController();
    const stop = onStreamState(setState);
    let timer: ReturnType<typeof setTimeout> | undefined;
    (async () => {
      try {
        for await (const event of client.events.stream({ signal: abort.signal })) {
          if (event.data.taskId !== taskId) continue;
          // A burst of events (a handoff writes several) is one reload.
          clearTimeout(timer);
          timer = setTimeout(reload, 250);
        }
      } catch {
        setState('lost');
      }
    })();
    return () => {
      abort.abort();
      stop();
      clearTimeout(timer);
      setState(undefined);
    };
  }, [taskId, on]);
  return state;
}

const FOLLOW_TEXT: Record<StreamState, string> = { connecting: 'connecting…', live: 'following: changes appear as they happen', lost: 'connection lost; reconnecting…' };

export function TaskView({ taskId }: { taskId: string }) {
  const [spacing, setSpacing] = useState<Spacing>('order');
  const [follow, setFollow] = useState(false);
  const [data, reload] = useLoad((signal) => loadTask(taskId, signal), [taskId]);
  const following = useFollow(taskId, follow, reload);
  const [chartRef, chartWidth] = useWidth(data.state === 'done');
  return html`<section>
    <${PageTitle} title=${`Task ${taskId}`}>Task <span class="mono">${taskId}</span><//>
    <p class="actions">
      <a href=${paths.audit(taskId)}>Audit trail and verification</a>
      <a href=${paths.search(new URLSearchParams({ taskId }))}>Search this task's checkpoints</a>
      <button type="button" onClick=${reload}>Refresh</button>
      <label class="check"><input type="checkbox" checked=${follow} onChange=${(e: Event) => setFollow((e.currentTarget as HTMLInputElement).checked)} /> Follow live</label>
      <span class="muted" role="status" data-testid="follow-state" data-state=${following ?? 'off'}>${following ? FOLLOW_TEXT[following] : ''}</span>
    </p>
    ${data.state === 'loading' ? html`<${Loading} what="the task" />` : null}
    ${data.state === 'failed' ? html`<${Problem} error=${data.error} what="The task could not be read" />` : null}
    ${data.state === 'done'
      ? html`<${Summary} task=${data.value.task} />
          ${data.value.complete ? null : html`<p class="warning">This task is long: the timeline shows its first ${MAX_ITEMS} checkpoints and audit entries.</p>`}
          <h2 id="timeline-heading">Timeline</h2>
          <fieldset class="inline-form">
            <legend>Spacing</legend>
            <label><input type="radio" name="spacing" checked=${spacing === 'order'} onChange=${() => setSpacing('order')} /> by order of events</label>
            <label><input type="radio" name="spacing" checked=${spacing === 'time'} onChange=${() => setSpacing('time')} /> proportional to time</label>
          </fieldset>
          <div class="chart-wrap" tabindex="0" role="region" aria-labelledby="timeline-heading" ref=${chartRef}>
            <${TimelineChart} story=${data.value.story} spacing=${spacing} taskId=${taskId} width=${chartWidth} />
          </div>
          <${Legend} />
          <${Tables} story=${data.value.story} />`
      : null}
  </section>`;
}
